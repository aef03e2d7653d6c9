#!/usr/bin/env bash
# Installs every Debian 12 package ftmpi needs to build, test and benchmark.
# Idempotent; needs root (or sudo). autoconf and automake build the autotools project that tests the
# compiler wrappers (tests/mpi/install_test.cmake); jq reads the tools' JSON in tests; rsvg-convert (librsvg2-bin)
# renders ftinject's timeline pictures in a test; Slurm (slurmctld, slurmd, slurm-client, munge) and libpmix-dev
# run and build the srun --mpi=pmix tests (tests/slurm starts its own daemons, without systemd).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential gfortran cmake ninja-build pkg-config autoconf automake
  libcli11-dev libspdlog-dev libfmt-dev
  libhwloc-dev hwloc-nox libzstd-dev libibverbs-dev libisal-dev libsodium-dev
  libboost-test-dev libbenchmark-dev
  clang libclang-rt-14-dev
  iproute2 nftables procps jq librsvg2-bin
  slurmctld slurmd slurm-client munge libpmix-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
