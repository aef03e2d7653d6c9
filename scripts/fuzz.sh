#!/usr/bin/env bash
# Fuzzes the wire decoder with libFuzzer (clang, ASan + UBSan). docs/wire-format.md says more.
#
#   scripts/fuzz.sh [SECONDS]     build wire_fuzz, run it SECONDS (default 60) on the corpus
#   scripts/fuzz.sh --minimize    merge what the runs found into tests/fuzz/corpus/wire, minimized
#
# Runs grow a working corpus in the build directory, seeded from the committed one, so that the committed
# corpus changes only when asked (--minimize). The committed corpus keeps hand-made files as they are:
# seed-* (valid frames of each type, interesting invalid ones) and regression-* (inputs that once crashed;
# a crash leaves its input in $build/wire-artifacts/). The rest is what libFuzzer's merge finds adds
# coverage beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/fuzz}
committed=tests/fuzz/corpus/wire
work=$build/wire-corpus
artifacts=$build/wire-artifacts

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DFTMPI_FUZZ=ON -DFTMPI_SANITIZE=ON -DFTMPI_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target wire_fuzz -j "${FTMPI_FUZZ_JOBS:-2}"
fuzzer=$build/tests/fuzz/wire_fuzz
mkdir -p "$work" "$artifacts"

if [ "${1:-}" = "--minimize" ]; then
  minimized=$(mktemp -d)
  trap 'rm -rf "$minimized"' EXIT
  find "$committed" -maxdepth 1 -type f \( -name 'seed-*' -o -name 'regression-*' \) -exec cp {} "$minimized"/ \;
  # -merge=1 with a greedy set cover: the same features from fewer files (~180 rather than ~220).
  "$fuzzer" -set_cover_merge=1 "$minimized" "$committed" "$work"
  find "$committed" -maxdepth 1 -type f -delete
  cp "$minimized"/* "$committed"/
  echo "fuzz.sh: $committed now holds $(find "$committed" -type f | wc -l) inputs"
  exit 0
fi

seconds=${1:-60}
# Frames are at most a header and a 1 KiB payload under the fuzzer's limits; longer inputs add nothing.
"$fuzzer" -max_total_time="$seconds" -max_len=1300 -print_final_stats=1 \
          -artifact_prefix="$artifacts/" "$work" "$committed"
