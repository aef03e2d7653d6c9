#!/usr/bin/env bash
# Fuzzes with libFuzzer (clang, ASan + UBSan): the wire decoder by default, or another target of
# tests/fuzz (wire, json, control, engine, fault_spec, rte_frames). docs/wire-format.md says more.
#
#   scripts/fuzz.sh [--target NAME] [SECONDS]   build NAME_fuzz, run it SECONDS (default 60) on the corpus
#   scripts/fuzz.sh [--target NAME] --minimize  merge what the runs found into tests/fuzz/corpus/NAME, minimized
#
# Runs grow a working corpus in the build directory, seeded from the committed one, so that the committed
# corpus changes only when asked (--minimize). The committed corpus keeps hand-made files as they are:
# seed-* (valid frames of each type, interesting invalid ones) and regression-* (inputs that once crashed;
# a crash leaves its input in $build/<target>-artifacts/). The rest is what libFuzzer's merge finds adds
# coverage beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
target=wire
if [ "${1:-}" = "--target" ]; then
  target=${2:?--target needs one of wire, json, control, engine, fault_spec, rte_frames}
  shift 2
fi
case "$target" in
  wire|json|control|engine|fault_spec|rte_frames) ;;
  *) echo "fuzz.sh: unknown target '$target' (wire, json, control, engine, fault_spec, rte_frames)" >&2; exit 2 ;;
esac
build=${BUILD_DIR:-build/fuzz}
committed=tests/fuzz/corpus/$target
work=$build/$target-corpus
artifacts=$build/$target-artifacts

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DFTMPI_FUZZ=ON -DFTMPI_SANITIZE=ON -DFTMPI_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target "${target}_fuzz" -j "${FTMPI_FUZZ_JOBS:-2}"
fuzzer=$build/tests/fuzz/${target}_fuzz
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
# Wire frames are at most a header and a 1 KiB payload under the fuzzer's limits; longer inputs add nothing.
# The engine target reads a script of a few bytes per frame. Its inputs run real exchanges (-timeout 20 s).
case "$target" in
  wire) limits=(-max_len=1300) ;;
  engine) limits=(-max_len=512 -timeout=20 -rss_limit_mb=4096) ;;
  *) limits=() ;;
esac
"$fuzzer" -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 \
          -artifact_prefix="$artifacts/" "$work" "$committed"
