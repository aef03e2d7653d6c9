#!/usr/bin/env bash
# build-bench.sh BUILD_DIR OUT_DIR : what the side-by-side benchmarks run, built the same way for each MPI.
# Installs what is missing (install-deps.sh, install-peers.sh), builds ftmpi (Release), installs it into
# BUILD_DIR/install, and compiles with -O2: bench/mpi/mpi_pingpong.c with ftmpi's ftcc, mpicc.openmpi and
# mpicc.mpich into OUT_DIR/pp-{ftmpi,ompi,mpich}; bench/mpi/mpi_coll.c the same way into
# OUT_DIR/coll-{ftmpi,ompi,mpich} (collectives); tests/fault/bulk_transfer.c with ftcc into
# OUT_DIR/bulk-ftmpi (failover drills); bench/mpi/cacheline_pingpong.c into OUT_DIR/cacheline (the
# core-to-core probe). Reports on stderr only.
set -euo pipefail
build=${1:?usage: build-bench.sh BUILD_DIR OUT_DIR}
out=${2:?usage: build-bench.sh BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh >&2
./scripts/install-peers.sh >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" >&2
prefix=$(cd "$build" && pwd)/install
cmake --install "$build" --prefix "$prefix" >/dev/null
mkdir -p "$out"
src=$root/bench/mpi/mpi_pingpong.c
"$prefix/bin/ftcc" -O2 -std=c11 "$src" -o "$out/pp-ftmpi"
"$prefix/bin/ftcc" -O2 -std=c11 "$root/tests/fault/bulk_transfer.c" -o "$out/bulk-ftmpi"
mpicc.openmpi -O2 -std=c11 "$src" -o "$out/pp-ompi"
mpicc.mpich -O2 -std=c11 "$src" -o "$out/pp-mpich"
coll=$root/bench/mpi/mpi_coll.c
"$prefix/bin/ftcc" -O2 -std=c11 "$coll" -o "$out/coll-ftmpi"
mpicc.openmpi -O2 -std=c11 "$coll" -o "$out/coll-ompi"
mpicc.mpich -O2 -std=c11 "$coll" -o "$out/coll-mpich"
cc -O2 -std=c11 -pthread "$root/bench/mpi/cacheline_pingpong.c" -o "$out/cacheline"
