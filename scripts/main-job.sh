#!/usr/bin/env bash
# Builds ftmpi (Release) and runs the main job. Until ftrun exists, that is every library's benchmark
# table; the tables are Markdown, ready for docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${FTMPI_BUILD_DIR:-build/release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_BUILD_TESTS=OFF
cmake --build "$build"
for bench in seq_bench frag_bench match_bench; do
  if [ -x "$build/bench/$bench" ]; then
    echo "## $bench"
    "$build/bench/$bench"
    echo
  fi
done
