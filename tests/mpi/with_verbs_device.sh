#!/usr/bin/env bash
# with_verbs_device.sh COMMAND... : runs COMMAND where this machine has an RDMA adapter (libibverbs finds
# them under /sys/class/infiniband), else exits 77, which CTest reports as skipped, saying why.
if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  echo "no RDMA adapter here (/sys/class/infiniband is empty): the real-device verbs test is skipped"
  exit 77
fi
exec "$@"
