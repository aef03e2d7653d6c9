#!/usr/bin/env bash
# across_hosts.sh SIMHOSTS FTRUN SPREAD PROGRAM [ARGS...]: runs an MPI test program across the two
# simulated hosts of SIMHOSTS (tests/netns/simhosts.sh; run it under `simhosts.sh session`), with ftrun
# started on ftA and SPREAD ranks per host ("2,2": two on ftA, two on ftB), with the default paths:
# shared memory between the ranks of a host, UDP between the hosts. Exits with the job's status.
set -euo pipefail
simhosts=${1:?usage: across_hosts.sh SIMHOSTS FTRUN SPREAD PROGRAM [ARGS...]}
ftrun=${2:?}
spread=${3:?}
shift 3
IFS=, read -r on_a on_b <<<"$spread"
cd /tmp
exec "$simhosts" exec ftA "$ftrun" --launch-agent "$simhosts agent" -n $((on_a + on_b)) \
  --host "ftA:$on_a,ftB:$on_b" --timeout 150 "$@"
