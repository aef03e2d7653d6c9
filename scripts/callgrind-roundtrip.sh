#!/usr/bin/env bash
# callgrind-roundtrip.sh [--scale X] [--multiple] [--keep-going] BUILD...
#
# Counts the instructions rank 0 executes per zero-byte round trip over shared memory, and per call of
# the functions on that path, for each BUILD: a git revision of this repository (built Release and
# installed under build/callgrind-roundtrip/<commit>/, as compare-builds.sh does) or an install prefix
# (a directory with bin/ftcc and bin/ftrun, e.g. build/compare-builds/before/install). Instructions are
# deterministic where time is not: on this shared 2-core machine they are the number to compare a change
# of a few percent by (docs/benchmarks.md); compare-builds.sh gives the time.
#
# bench/mpi/mpi_pingpong.c is built with each BUILD's ftcc (-O2 -fno-inline, so that its pingpong() is a
# function of its own) and run as `ftrun -n 2 --bind-to core WRAPPER pingpong -L -s 0 -r 1 -t X`, the
# wrapper running rank 0 under `valgrind --tool=callgrind --toggle-collect=pingpong` (only what happens
# inside the benchmark's timed and warm-up loops counts) and rank 1 natively. At the default scale (0.1)
# that is 1,106 round trips: 1,000 timed, 100 warm-up, 2 x 3 to line the ranks up.
# --multiple runs the benchmark with -T (MPI_Init_thread(MPI_THREAD_MULTIPLE)): what the locks cost.
#
# Rank 0 is ~50x slower under valgrind, so rank 1 has nearly always answered when rank 0 polls; a poll
# that finds nothing adds its instructions to the count, so the table shows polls per round trip
# (progress calls): 1.00 means none was empty. Prints one Markdown table: instructions per round trip,
# then per function the instructions per call (inclusive) and calls per round trip. The callgrind files
# stay in build/callgrind-roundtrip/out/ for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scale=0.1
threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=${2:?--scale needs a number}; shift 2 ;;
    --multiple) threads=(-T); shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "callgrind-roundtrip: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "callgrind-roundtrip: give one or more revisions or install prefixes (see --help)" >&2; exit 2; }
[[ "$scale" =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "callgrind-roundtrip: --scale needs a positive number" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "callgrind-roundtrip: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
# Round trips inside pingpong(), as mpi_pingpong.c counts them: n timed, max(n/10, 5) warm-up, 3 + 3 lining up.
timed=$(awk -v s="$scale" 'BEGIN { n = int(s * 10000); if (n < 10) n = 10; print n }')
round_trips=$(( timed + (timed / 10 > 5 ? timed / 10 : 5) + 6 ))
work=$root/build/callgrind-roundtrip
mkdir -p "$work/out"

# Builds revision $1 into $work/<commit>/install; prints the prefix.
build_rev() {
  local commit src dir
  commit=$(git rev-parse --verify "$1^{commit}") || { echo "callgrind-roundtrip: '$1' is no revision or install prefix here" >&2; exit 2; }
  dir=$work/${commit:0:12}
  src=$dir/src
  [ -d "$src" ] || git worktree add -f --detach "$src" "$commit" >/dev/null
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_BUILD_TESTS=OFF \
        -DFTMPI_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$dir/install" "${launcher[@]}" >&2
  cmake --build "$dir/build" --parallel 2 >&2
  cmake --install "$dir/build" >&2
  echo "$dir/install"
}

wrapper=$work/rank0-callgrind.sh
cat >"$wrapper" <<'EOF'
#!/bin/sh
# Rank 0 under callgrind, collecting inside pingpong() only; the other ranks as they are.
if [ "${FTMPI_RANK:-}" = 0 ]; then
  exec valgrind --tool=callgrind --toggle-collect=pingpong --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
EOF
chmod +x "$wrapper"

# Per function of interest: "<label> <calls> <inclusive instructions>", and "total <Ir>", from one
# callgrind file (its name-compressed fn=/cfn= records; a cost line after calls= is the call's inclusive cost).
summarise() {
  awk '
    function name(s,   id) {
      if (match(s, /^\([0-9]+\)/)) {
        id = substr(s, 2, RLENGTH - 2)
        if (RLENGTH < length(s)) names[id] = substr(s, RLENGTH + 2)
        return names[id]
      }
      return s
    }
    function label(f) {
      if (f ~ /^P?MPI_Send$/) return "MPI_Send"
      if (f ~ /^P?MPI_Recv$/) return "MPI_Recv"
      if (f ~ /EngineCore::send_eager\(/) return "EngineCore::send_eager"
      if (f ~ /EngineCore::irecv\(/) return "EngineCore::irecv"
      if (f ~ /EngineCore::progress\(\)/) return "EngineCore::progress"
      if (f ~ /EngineCore::on_frame\(/) return "EngineCore::on_frame"
      if (f ~ /EngineCore::release\(/) return "EngineCore::release"
      if (f ~ /ShmPath::send\(/) return "ShmPath::send"
      if (f ~ /ShmPath::poll\(/) return "ShmPath::poll"
      return ""
    }
    /^fn=/ { fn = name(substr($0, 4)); next }
    /^cfn=/ { cfn = name(substr($0, 5)); next }
    /^calls=/ { split(substr($0, 7), a, " "); calls[cfn] += a[1]; in_call = 1; next }
    /^summary:/ { total = $2 }
    /^[0-9+*-]/ { incl[fn] += $NF; in_call = 0; next }
    END {
      print "total", 0, total
      for (f in calls) {
        l = label(f)
        if (l != "") { c[l] += calls[f]; i[l] += incl[f] }
      }
      for (l in c) print l, c[l], i[l]
    }' "$1"
}

labels=()
declare -A table
for build in "$@"; do
  if [ -x "$build/bin/ftcc" ] && [ -x "$build/bin/ftrun" ]; then
    prefix=$(cd "$build" && pwd)
    tag=$(basename "$(dirname "$prefix")")/$(basename "$prefix")
  else
    prefix=$(build_rev "$build")
    tag=$build
  fi
  key=$(echo "$tag" | tr -c 'A-Za-z0-9._-' '_')
  "$prefix/bin/ftcc" -O2 -fno-inline "$root/bench/mpi/mpi_pingpong.c" -o "$work/out/$key.pingpong"
  out=$work/out/$key${threads:+-multiple}.callgrind
  echo "callgrind-roundtrip: $tag: rank 0 under callgrind ($round_trips round trips)" >&2
  CALLGRIND_OUT=$out "$prefix/bin/ftrun" -n 2 --bind-to core "$wrapper" "$work/out/$key.pingpong" -L -s 0 -r 1 \
    -t "$scale" "${threads[@]}" >"$work/out/$key.txt" 2>&1 ||
    { echo "callgrind-roundtrip: $tag: the run failed; see $work/out/$key.txt" >&2; exit 1; }
  labels+=("$tag")
  while read -r what calls incl; do
    table[$tag,$what]="$calls $incl"
  done < <(summarise "$out")
done

rows=(total MPI_Send MPI_Recv EngineCore::send_eager ShmPath::send EngineCore::irecv EngineCore::progress
      ShmPath::poll EngineCore::on_frame EngineCore::release)
header="| instructions (calls per round trip) |"
rule="|---|"
for tag in "${labels[@]}"; do header+=" $tag |"; rule+="---:|"; done
echo "$header"
echo "$rule"
for row in "${rows[@]}"; do
  line="| ${row/total/per round trip} |"
  for tag in "${labels[@]}"; do
    read -r calls incl <<<"${table[$tag,$row]:-0 0}"
    if [ "$row" = total ]; then
      line+=" $(awk -v t="$incl" -v n="$round_trips" 'BEGIN { printf "%.0f", t / n }') |"
    elif [ "$calls" = 0 ]; then
      line+=" - |"
    else
      line+=" $(awk -v i="$incl" -v c="$calls" -v n="$round_trips" 'BEGIN { printf "%.0f (%.2f)", i / c, c / n }') |"
    fi
  done
  echo "$line"
done
