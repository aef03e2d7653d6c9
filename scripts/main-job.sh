#!/usr/bin/env bash
# The main job: builds ftmpi (Release), runs a small MPI job under ftrun beside Open MPI and MPICH and
# prints its latency/bandwidth table (scripts/compare-mpi.sh), then every library's benchmark table. The
# tables are Markdown, ready for docs/benchmarks.md. Arguments go to compare-mpi.sh (e.g. --rounds 5).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/release}
echo "## MPI point-to-point: ftmpi, Open MPI, MPICH (bench/mpi/mpi_pingpong.c)"
./scripts/compare-mpi.sh --build-dir "$build" "$@"
echo
for bench in seq_bench frag_bench match_bench path_bench; do
  exe=$build/bench/${bench%_bench}/$bench
  if [ -x "$exe" ]; then
    echo "## $bench"
    "$exe"
    echo
  fi
done
