#!/usr/bin/env bash
# compare-builds.sh [--rounds R] [--sizes "0 1048576"] [--after-param K=V]... [--bench-arg ARG]... BEFORE AFTER
#
# Measures two versions of ftmpi side by side, interleaved on this machine, to show what a change to the
# engine costs (docs/benchmarks.md: only ratios measured in one run count). BEFORE and AFTER are git
# revisions of this repository (e.g. main and HEAD): each is checked out in a worktree under
# build/compare-builds/, built (Release) and installed there, and bench/mpi/mpi_pingpong.c is built with
# each one's ftcc. Then, for R rounds (default 5), each of
#
#   shm   ftrun -n 2 --bind-to core                  (shared memory)
#   udp   ftrun -n 2 --bind-to core --paths udp      (UDP over loopback: CRC32C, ACKs, retransmission)
#
# runs the latency ping-pong at each size (default 0 B and 1 MB) for BEFORE, then AFTER, then the next
# round. Prints one Markdown table: the median over the rounds of each run's median half round trip, and
# AFTER / BEFORE. Raw outputs stay in build/compare-builds/raw/. Takes about 3 minutes after the builds.
#
# --after-param K=V (repeatable) runs AFTER with `--param K=V`: the cost of a setting. With BEFORE and
# AFTER the same revision it is built once, e.g. `compare-builds.sh --after-param engine.integrity=mac
# HEAD HEAD`. --bench-arg ARG (repeatable) passes ARG to the ping-pong of both, e.g. `--bench-arg -T`:
# ask for MPI_THREAD_MULTIPLE.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=5
sizes="0 1048576"
after_params=()
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --after-param) after_params+=(--param "${2:?--after-param needs K=V}"); shift 2 ;;
    --bench-arg) bench_args+=("${2:?--bench-arg needs an argument}"); shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a list of byte counts}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare-builds: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || { echo "compare-builds: give two revisions, e.g. 'compare-builds.sh main HEAD' (see --help)" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "compare-builds: --rounds needs a positive number" >&2; exit 2; }
./scripts/install-deps.sh >&2
work=$root/build/compare-builds
mkdir -p "$work/raw"

# Builds revision $1 as "$2" (before/after) into $work/$2/install; prints the install prefix.
build_one() {
  local rev=$1 name=$2 commit src
  commit=$(git rev-parse --verify "$rev^{commit}") || { echo "compare-builds: '$rev' is no revision here" >&2; exit 2; }
  src=$work/$name/src
  if [ -d "$src" ]; then
    git -C "$src" checkout -q --detach "$commit"
  else
    git worktree add -f --detach "$src" "$commit" >/dev/null
  fi
  echo "compare-builds: $name = $rev ($(git rev-parse --short "$commit"))" >&2
  cmake -S "$src" -B "$work/$name/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_BUILD_TESTS=OFF \
        -DFTMPI_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$work/$name/install" >&2
  cmake --build "$work/$name/build" >&2
  cmake --install "$work/$name/build" >&2
  "$work/$name/install/bin/ftcc" -O2 "$root/bench/mpi/mpi_pingpong.c" -o "$work/$name/pingpong"
}
build_one "$1" before
if [ "$(git rev-parse --verify "$1^{commit}")" = "$(git rev-parse --verify "$2^{commit}")" ]; then
  rm -rf "$work/after/install" "$work/after/pingpong"
  mkdir -p "$work/after"
  cp -a "$work/before/install" "$work/after/install"
  cp "$work/before/pingpong" "$work/after/pingpong"
  echo "compare-builds: after = before's build" >&2
else
  build_one "$2" after
fi

# One run: prints "<usec>" for size $3 of build $1 over path $2.
run_one() {
  local name=$1 path=$2 size=$3 out
  local args=(-n 2 --bind-to core)
  [ "$path" = udp ] && args+=(--paths udp)
  [ "$name" = after ] && args+=("${after_params[@]}")
  out=$work/raw/$name-$path-$size-$round.txt
  "$work/$name/install/bin/ftrun" "${args[@]}" "$work/$name/pingpong" -L -s "$size" "${bench_args[@]}" >"$out" 2>&1 ||
    { echo "compare-builds: $name $path $size B failed; see $out" >&2; exit 1; }
  awk -v s="$size" '$1 == "lat" && $2 == s { print $3 }' "$out"
}

declare -A results
for round in $(seq 1 "$rounds"); do
  echo "compare-builds: round $round of $rounds" >&2
  for path in shm udp; do
    for size in $sizes; do
      for name in before after; do
        results[$name,$path,$size]+="$(run_one "$name" "$path" "$size") "
      done
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| path | size | before ($1) us | after ($2) us | after / before |"
echo "|---|---:|---:|---:|---:|"
for path in shm udp; do
  for size in $sizes; do
    b=$(echo "${results[before,$path,$size]}" | median)
    a=$(echo "${results[after,$path,$size]}" | median)
    awk -v p="$path" -v s="$size" -v b="$b" -v a="$a" \
      'BEGIN { printf "| %s | %d B | %.3f | %.3f | %.3f |\n", p, s, b, a, a / b }'
  done
done
