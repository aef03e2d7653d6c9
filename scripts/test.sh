#!/usr/bin/env bash
# Installs what is missing, builds everything with AddressSanitizer + UBSan and -Werror, runs every test.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` for the quick unit tests alone.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${BUILD_DIR:-build/asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFTMPI_SANITIZE=ON -DFTMPI_WERROR=ON \
      -DFTMPI_BUILD_BENCH=OFF
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
