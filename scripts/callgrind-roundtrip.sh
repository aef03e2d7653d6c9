#!/usr/bin/env bash
# callgrind-roundtrip.sh [--scale X] [--runs N] [--multiple] [--udp] [--param K=V]... BUILD...
#   (BUILD: revision, prefix, openmpi, mpich)
#
# Counts the instructions rank 0 executes per zero-byte round trip over shared memory (UDP with --udp),
# and per call of the functions on that path, for each BUILD: a git revision of this repository (built Release and
# installed under build/callgrind-roundtrip/<commit>/, as compare-builds.sh does), an install prefix
# (a directory with bin/ftcc and bin/ftrun, e.g. build/compare-builds/before/install), or `openmpi` or
# `mpich` (these two names are never taken for revisions): Debian's, the same benchmark built with
# mpicc.openmpi / mpicc.mpich and run by their own launchers (Open MPI with --mca pml ob1 --mca btl
# self,vader; MPICH as installed: ch4 over UCX). Instructions are deterministic where time is not: on
# this shared 2-core machine they are the number to compare a change of a few percent by
# (docs/benchmarks.md); compare-builds.sh gives the time.
#
# bench/mpi/mpi_pingpong.c is built with each BUILD's ftcc (-O2 -fno-inline, so that its pingpong() is a
# function of its own) and run as `ftrun -n 2 --bind-to core WRAPPER pingpong -L -s 0 -r 1 -t X`, the
# wrapper running rank 0 under `valgrind --tool=callgrind --toggle-collect=pingpong` (only what happens
# inside the benchmark's timed and warm-up loops counts) and rank 1 natively. At the default scale (0.1)
# that is 1,106 round trips: 1,000 timed, 100 warm-up, 2 x 3 to line the ranks up.
# --multiple runs the benchmark with -T (MPI_Init_thread(MPI_THREAD_MULTIPLE)): what the locks cost.
# --udp runs ftmpi's ranks over UDP on 127.0.0.1 instead (--paths udp --rails 127.0.0.1), with timers long
# enough that valgrind's slowness sets none off (engine.retransmit.min=2s, .max=4s, engine.ack.delay=1s:
# natively a reply carries the ACK long before any timer); Open MPI and MPICH are counted over shared
# memory only, so not with --udp. --param K=V (repeatable) goes to ftrun, e.g. engine.reliability=off.
#
# A poll that finds nothing (rank 1 has not answered yet) adds its instructions too, and how many there
# are depends on how busy the machine is. So each BUILD runs --runs times (default 3), and the
# instructions the round trips themselves take come from a straight-line fit, total = base + empty
# polls x cost of one (an empty poll is EngineCore::idle's call, and costs the same every time): the
# first row, base / round trips. For Open MPI and MPICH, whose waits have no such call, the empty polls
# are their progress function's calls (opal_progress, ucp_worker_progress) beyond one per round trip:
# right when each round trip's wait ends with one poll that delivers, as a blocking ping-pong's does.
# The fit's largest miss says how well that held (under 1 instruction per round trip when it does).
# Neither rank yields its core while it waits (engine.progress.spin): rank 1 answers sooner, and every
# empty poll of rank 0 costs the same (a yield would add a system call). Open MPI's empty polls do not
# all cost the same (opal_progress runs its event loop every so often), so its fit misses: read its
# row "as counted" from a quiet run instead, an upper bound given with that run's empty polls.
# Then per function, from the run with the fewest empty polls: instructions per call (inclusive) and
# calls per round trip. The callgrind files stay in build/callgrind-roundtrip/out/ for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scale=0.1
runs=3
threads=()
udp=0
params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --udp) udp=1; shift ;;
    --param) [[ "${2:-}" == *=* ]] || { echo "callgrind-roundtrip: --param needs NAME=VALUE" >&2; exit 2; }
             params+=(--param "$2"); shift 2 ;;
    --scale) scale=${2:?--scale needs a number}; shift 2 ;;
    --multiple) threads=(-T); shift ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "callgrind-roundtrip: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "callgrind-roundtrip: give one or more revisions, install prefixes, openmpi or mpich (see --help)" >&2; exit 2; }
[[ "$scale" =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "callgrind-roundtrip: --scale needs a positive number" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "callgrind-roundtrip: --runs needs a positive number" >&2; exit 2; }
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
# Rank 0 under callgrind, collecting inside pingpong() only; rank 1 natively. Neither yields its core
# while it waits (see callgrind-roundtrip.sh).
export FTMPI_ENGINE_PROGRESS_SPIN=1000000000
if [ "${FTMPI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}}" = 0 ]; then
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
      if (f ~ /EngineCore::receive\(/) return "EngineCore::receive"
      if (f ~ /EngineCore::irecv\(/) return "EngineCore::irecv"
      if (f ~ /EngineCore::progress\(\)/) return "EngineCore::progress"
      if (f ~ /EngineCore::on_frame\(/) return "EngineCore::on_frame"
      if (f ~ /EngineCore::release\(/) return "EngineCore::release"
      if (f ~ /EngineCore::idle\(/) return "EngineCore::idle"
      if (f ~ /ShmPath::send\(/) return "ShmPath::send"
      if (f ~ /ShmPath::poll\(/) return "ShmPath::poll"
      if (f ~ /UdpPath::send\(/) return "UdpPath::send"
      if (f ~ /header_mac\(/) return "frag::header_mac"
      if (f == "opal_progress" || f == "ucp_worker_progress") return "peer_progress"
      return ""
    }
    /^fn=/ { fn = name(substr($0, 4)); next }
    /^cfn=/ { cfn = name(substr($0, 5)); next }
    /^calls=/ { split(substr($0, 7), a, " "); calls[cfn] += a[1]; in_call = 1; next }
    /^summary:/ { total = $2 }
    /^[0-9+*-]/ { incl[fn] += $NF; in_call = 0; next }
    END {
      print "total", 0, total
      # Per label the matching function that costs most, inclusive: a this-adjusting thunk (on_frame,
      # called through FrameSink) when the function is reached only through it, else the function.
      for (f in calls) {
        l = label(f)
        if (l != "" && incl[f] > i[l]) { c[l] = calls[f]; i[l] = incl[f] }
      }
      for (l in c) print l, c[l], i[l]
    }' "$1"
}

labels=()
declare -A table fit fewest
for build in "$@"; do
  prefix=""
  if [ "$build" = openmpi ] || [ "$build" = mpich ]; then
    [ "$udp" = 0 ] || { echo "callgrind-roundtrip: $build is counted over shared memory only, not with --udp" >&2; exit 2; }
    tag=$build
    key=$build${threads:+-multiple}
    command -v "mpicc.$build" >/dev/null ||
      { echo "callgrind-roundtrip: mpicc.$build is missing (scripts/install-peers.sh)" >&2; exit 2; }
    "mpicc.$build" -O2 -fno-inline "$root/bench/mpi/mpi_pingpong.c" -o "$work/out/$key.pingpong"
    if [ "$build" = openmpi ]; then
      launch=(mpirun.openmpi -np 2 --bind-to core --allow-run-as-root --mca pml ob1 --mca btl self,vader)
    else
      launch=(mpiexec.mpich -n 2 -bind-to core)
    fi
  elif [ -x "$build/bin/ftcc" ] && [ -x "$build/bin/ftrun" ]; then
    prefix=$(cd "$build" && pwd)
    tag=$(basename "$(dirname "$prefix")")/$(basename "$prefix")
  else
    prefix=$(build_rev "$build")
    tag=$build
  fi
  if [ -n "${prefix:-}" ]; then
    key=$(printf '%s' "$tag" | tr -c 'A-Za-z0-9._-' '_')${threads:+-multiple}
    [ "$udp" = 0 ] || key+=-udp
    # Runs with other parameters keep files of their own.
    for ((i = 1; i < ${#params[@]}; i += 2)); do key+=-$(printf '%s' "${params[i]}" | tr -c 'A-Za-z0-9._-' '_'); done
    "$prefix/bin/ftcc" -O2 -fno-inline "$root/bench/mpi/mpi_pingpong.c" -o "$work/out/$key.pingpong"
    launch=("$prefix/bin/ftrun" -n 2 --bind-to core "${params[@]}")
    if [ "$udp" = 1 ]; then
      launch+=(--paths udp --rails 127.0.0.1 --param engine.retransmit.min=2s --param engine.retransmit.max=4s
               --param engine.ack.delay=1s)
    fi
  fi
  labels+=("$tag")
  points=""
  best=-1
  for run in $(seq 1 "$runs"); do
    out=$work/out/$key.$run.callgrind
    echo "callgrind-roundtrip: $tag: run $run of $runs, rank 0 under callgrind ($round_trips round trips)" >&2
    CALLGRIND_OUT=$out "${launch[@]}" "$wrapper" "$work/out/$key.pingpong" -L -s 0 -r 1 \
      -t "$scale" "${threads[@]}" >"$work/out/$key.$run.txt" 2>&1 ||
      { echo "callgrind-roundtrip: $tag: the run failed; see $work/out/$key.$run.txt" >&2; exit 1; }
    declare -A this=()
    while read -r what calls incl; do this[$what]="$calls $incl"; done < <(summarise "$out")
    read -r _ total <<<"${this[total]}"
    if [ -n "${prefix:-}" ]; then
      read -r empty _ <<<"${this[EngineCore::idle]:-0 0}"
    else
      read -r polls _ <<<"${this[peer_progress]:-0 0}"
      empty=$(( polls > round_trips ? polls - round_trips : 0 ))
    fi
    points+="$empty $total "
    # The function rows come from the run with the fewest empty polls.
    if [ "$best" -lt 0 ] || [ "$empty" -lt "$best" ]; then
      best=$empty
      for what in "${!this[@]}"; do table[$tag,$what]=${this[$what]}; done
    fi
  done
  # total = base + empty * e over the runs (least squares): base is the round trips' own instructions.
  fewest[$tag]=$best
  fit[$tag]=$(echo "$points" | awk -v n="$round_trips" '{
      for (i = 1; i < NF; i += 2) { k++; x[k] = $i; y[k] = $(i + 1); sx += $i; sy += $(i + 1) }
      mx = sx / k; my = sy / k
      for (j = 1; j <= k; j++) { vxx += (x[j] - mx) ^ 2; vxy += (x[j] - mx) * (y[j] - my) }
      if (vxx == 0) { print "- - -"; exit }
      e = vxy / vxx; b = my - e * mx
      for (j = 1; j <= k; j++) { r = y[j] - b - e * x[j]; if (r < 0) r = -r; if (r > worst) worst = r }
      printf "%.0f %.0f %.1f\n", b / n, e, worst / n }')
done

rows=(total MPI_Send MPI_Recv EngineCore::send_eager ShmPath::send EngineCore::receive EngineCore::irecv EngineCore::progress
      ShmPath::poll EngineCore::on_frame EngineCore::release EngineCore::idle)
# Over UDP callgrind reports UdpPath::poll entered some 60 times per round trip where the engine calls it
# once (an artefact of how it attributes the function's jumps), so no per-call figure of it is given:
# on_frame (the frame handed up) stands for the poll that delivers.
[ "$udp" = 0 ] || rows=(total MPI_Send MPI_Recv EngineCore::send_eager UdpPath::send EngineCore::receive
                        EngineCore::on_frame frag::header_mac EngineCore::idle)
header="| instructions per call (calls per round trip) |"
rule="|---|"
for tag in "${labels[@]}"; do header+=" $tag |"; rule+="---:|"; done
echo "$header"
echo "$rule"
line="| per round trip, empty polls taken out (fit over $runs runs) |"
for tag in "${labels[@]}"; do read -r base _ _ <<<"${fit[$tag]}"; line+=" $base |"; done
echo "$line"
line="| one empty poll (fit) |"
for tag in "${labels[@]}"; do read -r _ e _ <<<"${fit[$tag]}"; line+=" $e |"; done
echo "$line"
line="| the fit's largest miss, per round trip |"
for tag in "${labels[@]}"; do read -r _ _ miss <<<"${fit[$tag]}"; line+=" $miss |"; done
echo "$line"
line="| empty polls per round trip, the run below |"
for tag in "${labels[@]}"; do
  line+=" $(awk -v e="${fewest[$tag]}" -v n="$round_trips" 'BEGIN { printf "%.2f", e / n }') |"
done
echo "$line"
for row in "${rows[@]}"; do
  line="| ${row/total/per round trip as counted} |"
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
