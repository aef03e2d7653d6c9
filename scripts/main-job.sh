#!/usr/bin/env bash
# The main job: builds ftmpi (Release), runs small MPI jobs under ftrun beside Open MPI and MPICH and
# prints their latency/bandwidth and collective tables (scripts/compare-mpi.sh; --no-coll skips the
# collectives), then every library's benchmark table. The tables are Markdown, ready for
# docs/benchmarks.md. Arguments go to compare-mpi.sh (e.g. --rounds 5).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/release}
echo "## MPI point-to-point and collectives: ftmpi, Open MPI, MPICH (bench/mpi/mpi_pingpong.c, mpi_coll.c)"
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
