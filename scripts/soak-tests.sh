#!/usr/bin/env bash
# soak-tests.sh [--build asan|release] [--load idle|hog|pinned] [-j J] N [CTEST ARGS...]
#
# Runs the whole test suite N times in a row and says how many runs passed, to show that it passes on a
# fast idle machine and a slow loaded one alike:
#   --build asan      the Debug + ASan/UBSan build CI uses (scripts/test.sh; build/asan), the default
#   --build release   a Release build with the tests (build/release-tests)
#   --load idle       nothing else running (the default)
#   --load hog        one `yes > /dev/null` per core beside the suite
#   --load pinned     the suite pinned to core 0 (taskset -c 0)
# ctest runs with -j J (default: the number of cores). Each run's log is kept under
# build/soak/<build>-<load>/run-K.log, and the failing tests of each run are printed as it ends. Exits 1
# when any run failed.
#
#   scripts/soak-tests.sh 10                          # the idle ASan soak
#   scripts/soak-tests.sh --load hog 5
#   scripts/soak-tests.sh --build release --load pinned 3
set -euo pipefail
cd "$(dirname "$0")/.."
kind=asan
load=idle
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --build) kind=${2:?--build needs asan or release}; shift 2 ;;
    --load) load=${2:?--load needs idle, hog or pinned}; shift 2 ;;
    -j) jobs=${2:?-j needs a number}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "soak-tests: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
runs=${1:-}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "soak-tests: give the number of runs, e.g. 'soak-tests.sh 10' (see --help)" >&2; exit 2; }
shift
case "$kind" in
  asan) build=build/asan
        flags=(-DCMAKE_BUILD_TYPE=Debug -DFTMPI_SANITIZE=ON -DFTMPI_WERROR=ON -DFTMPI_BUILD_BENCH=OFF) ;;
  release) build=build/release-tests
           flags=(-DCMAKE_BUILD_TYPE=Release -DFTMPI_WERROR=ON -DFTMPI_BUILD_BENCH=OFF) ;;
  *) echo "soak-tests: --build takes asan or release, not '$kind'" >&2; exit 2 ;;
esac
prefix=()
case "$load" in
  idle|hog) ;;
  pinned) prefix=(taskset -c 0) ;;
  *) echo "soak-tests: --load takes idle, hog or pinned, not '$load'" >&2; exit 2 ;;
esac

./scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja "${flags[@]}" > /dev/null
cmake --build "$build"
logs=build/soak/$kind-$load
mkdir -p "$logs"

hogs=()
stop_hogs() { [ "${#hogs[@]}" -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
if [ "$load" = hog ]; then
  for _ in $(seq "$(nproc)"); do
    yes > /dev/null &
    hogs+=($!)
  done
fi

passed=0
for run in $(seq "$runs"); do
  log=$logs/run-$run.log
  start=$SECONDS
  if "${prefix[@]}" ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@" > "$log" 2>&1; then
    passed=$((passed + 1))
    result=passed
  else
    result="FAILED: $(grep -E '^\s+[0-9]+ - ' "$log" | sed -E 's/^\s+[0-9]+ - //' | tr '\n' ' ')"
  fi
  summary=$(grep -E 'tests passed, [0-9]+ tests failed' "$log" || echo "no ctest summary")
  echo "soak $kind/$load run $run/$runs: $result ($summary; $((SECONDS - start)) s; $log)"
done
echo "soak $kind/$load: $passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
