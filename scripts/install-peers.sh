#!/usr/bin/env bash
# Installs the MPI libraries ftmpi is measured against: Open MPI and MPICH from Debian 12. Both coexist;
# their wrappers are mpicc.openmpi / mpicc.mpich, their launchers mpirun.openmpi / mpiexec.mpich.
# Idempotent; needs root (or sudo). scripts/compare-mpi.sh calls it.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
packages=(openmpi-bin libopenmpi-dev mpich libmpich-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
for tool in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || { echo "install-peers.sh: $tool is missing after the install" >&2; exit 1; }
done
