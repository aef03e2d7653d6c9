#!/usr/bin/env bash
# Measures ftmpi beside Open MPI and MPICH in one run and prints one Markdown table with ftmpi's ratio to
# the best peer (DESIGN.md section 8: only ratios measured side by side count).
#
#   scripts/compare-mpi.sh [--rounds R] [--mpis "ftmpi ompi mpich"] [--build-dir D] [-- benchmark options]
#
# Installs what is missing (scripts/install-deps.sh, scripts/install-peers.sh; root or sudo), builds ftmpi
# (Release) and installs it into D/install, builds bench/mpi/mpi_pingpong.c with ftmpi's ftcc,
# mpicc.openmpi and mpicc.mpich (all -O2), then runs the three interleaved -- ftmpi, Open MPI, MPICH,
# ftmpi, ... -- for R rounds (default 3), two ranks bound to different cores in each:
#
#   ftrun -n 2 --bind-to core                                         (ftmpi's defaults; FTMPI_* set by
#                                                                      the caller reach every rank)
#   mpirun.openmpi -np 2 --bind-to core --mca btl self,vader           (shared memory: ob1 + vader)
#   mpiexec.mpich -n 2 -bind-to core                                  (Debian's MPICH: ch4)
#
# Each run reports the median of its repetitions per size; the table shows the median of the R runs per
# (MPI, size). Latency is half a round trip (lower is better, ratio = ftmpi / best peer); bandwidth is the
# best message size's streaming rate (higher is better, ratio = ftmpi / best peer). Raw outputs and a
# table of every size stay in D/compare-mpi/. Takes about a minute after the build, up to four when
# disturbed runs must be repeated (see below).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

rounds=3
mpis="ftmpi ompi mpich"
build=${BUILD_DIR:-build/release}
bench_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --mpis) mpis=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare-mpi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $rounds in '' | *[!0-9]* | 0) echo "compare-mpi.sh: --rounds needs a positive integer" >&2; exit 2 ;; esac

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# ---- Build ftmpi and the three benchmark programs (reports on stderr: stdout is the table) ----
work=$(mkdir -p "$build" && cd "$build" && pwd)/compare-mpi
rm -rf "$work"
mkdir -p "$work/raw"
./scripts/build-bench.sh "$build" "$work"
prefix=$(cd "$build" && pwd)/install

ompi_root=()
if [ "$(id -u)" -eq 0 ]; then
  ompi_root=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
launch() {  # launch MPI PROGRAM ARGS...: the command line that runs PROGRAM on two bound ranks
  local mpi=$1; shift
  case $mpi in
    ftmpi) echo "$prefix/bin/ftrun" -n 2 --bind-to core "$@" ;;
    ompi) echo mpirun.openmpi -np 2 --bind-to core --mca btl self,vader "${ompi_root[@]}" "$@" ;;
    mpich) echo mpiexec.mpich -n 2 -bind-to core "$@" ;;
    *) echo "compare-mpi.sh: unknown MPI $mpi (ftmpi, ompi, mpich)" >&2; exit 2 ;;
  esac
}
for mpi in $mpis; do launch "$mpi" >/dev/null; done

# ---- Run them interleaved ----
date_run=$(date -u '+%Y-%m-%d %H:%M UTC')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
if awk -v l="$load_start" 'BEGIN { exit !(l + 0 >= 1.0) }'; then
  echo "compare-mpi.sh: warning: load average $load_start at the start; the figures will be noisy" >&2
fi
# Two kinds of noise are caught, and a disturbed run is repeated (at most twice, 5 s later):
# - other jobs: while a run goes on, a sampler counts the samples in which more tasks were runnable than
#   the two ranks and itself; more than a tenth is disturbed;
# - the host: on a VM the time a cache line takes between the two cores jumps (35 ns to 100+ ns here) when
#   the hypervisor moves the virtual CPUs, and every MPI's latency jumps with it for seconds. A probe
#   before and after each run measures it (bench/mpi/cacheline_pingpong.c); 1.5 times the best so far is
#   disturbed.
probe() { "$work/cacheline" | awk '{ print $2 }'; }
best_probe=$(probe)
monitor() {  # monitor FILE: samples until SIGTERM, then writes "samples busy" to FILE
  local file=$1 samples=0 busy=0 running
  trap 'echo "$samples $busy" >"$file"; exit 0' TERM
  while :; do
    read -r _ _ _ running _ </proc/loadavg
    samples=$((samples + 1))
    if [ "${running%/*}" -gt 3 ]; then busy=$((busy + 1)); fi
    sleep 0.2
  done
}
monitor_pid=""
trap '[ -z "$monitor_pid" ] || kill "$monitor_pid" 2>/dev/null || true' EXIT
total_samples=0
total_busy=0
repeats=0
for ((r = 1; r <= rounds; ++r)); do
  for mpi in $mpis; do
    out=$work/raw/round$r-$mpi.txt
    for attempt in 1 2 3; do
      before=$(probe)
      monitor "$out.monitor" &
      monitor_pid=$!
      # shellcheck disable=SC2046 # launch prints a command line of plain words
      if ! timeout 300 $(launch "$mpi" "$work/pp-$mpi") "${bench_args[@]}" >"$out" 2>"$out.err"; then
        echo "compare-mpi.sh: $mpi failed in round $r; its output:" >&2
        cat "$out" "$out.err" >&2
        exit 1
      fi
      kill "$monitor_pid"
      wait "$monitor_pid" || true
      monitor_pid=""
      read -r samples busy <"$out.monitor"
      after=$(probe)
      printf '%s\n%s\n' "$before" "$after" >"$out.probe"
      best_probe=$(printf '%s\n' "$before" "$after" "$best_probe" | sort -n | head -1)
      slow_host=$(awk -v x="$before" -v y="$after" -v b="$best_probe" 'BEGIN { print (x > 1.5 * b || y > 1.5 * b) ? 1 : 0 }')
      if grep -q 'DATA ERRORS' "$out"; then
        echo "compare-mpi.sh: $mpi delivered wrong data in round $r:" >&2
        cat "$out" "$out.err" >&2
        exit 1
      fi
      if { [ $((busy * 10)) -le "$samples" ] && [ "$slow_host" = 0 ]; } || [ "$attempt" = 3 ]; then break; fi
      echo "compare-mpi.sh: round $r: $mpi disturbed (other tasks in $busy of $samples samples; cache line" \
           "$before ns before, $after ns after, best $best_probe ns); repeating it" >&2
      repeats=$((repeats + 1))
      sleep 5
    done
    total_samples=$((total_samples + samples))
    total_busy=$((total_busy + busy))
    echo "compare-mpi.sh: round $r/$rounds: $mpi done" >&2
  done
done
interference=$(awk -v s="$total_samples" -v b="$total_busy" 'BEGIN { printf "%.0f%%", s ? 100 * b / s : 0 }')
# The probes around the runs that were kept (the last attempt of each).
probes=$(cat "$work"/raw/round*-*.txt.probe | sort -n | awk '{ v[NR] = $1 } END { printf "median %s ns (%s to %s)", v[int((NR + 1) / 2)], v[1], v[NR] }')

# ---- Medians per (MPI, kind, size) over the rounds ----
awk '
  FNR == 1 { n = split(FILENAME, parts, "-"); mpi = parts[n]; sub(/\.txt$/, "", mpi) }
  ($1 == "lat" || $1 == "bw") && NF == 3 { key = mpi " " $1 " " $2; c = ++count[key]; val[key, c] = $3 }
  END {
    for (key in count) {
      n = count[key]
      for (i = 1; i <= n; ++i) v[i] = val[key, i]
      for (i = 2; i <= n; ++i) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; --j) v[j + 1] = v[j]; v[j + 1] = x }
      m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      print key, m
    }
  }' "$work"/raw/round*-*.txt | sort -k1,1 -k2,2 -k3,3n >"$work/medians.txt"

median_of() { awk -v m="$1" -v k="$2" -v s="$3" '$1 == m && $2 == k && $3 == s { print $4 }' "$work/medians.txt"; }
peak_of() { awk -v m="$1" '$1 == m && $2 == "bw" && $4 > best { best = $4; size = $3 } END { if (best) print best, size }' "$work/medians.txt"; }
human_size() { awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) print b / 1048576 " MB"; else if (b >= 1024 && b % 1024 == 0) print b / 1024 " KB"; else print b " B" }'; }

names=(ftmpi ompi mpich)
titles=("ftmpi" "Open MPI" "MPICH")
row_latency() {  # row_latency SIZE TARGET
  local size=$1 target=$2 cells="" ft="" best=""
  for mpi in "${names[@]}"; do
    v=$(median_of "$mpi" lat "$size")
    if [ -z "$v" ]; then cells+=" - |"; continue; fi
    cells+=" $(awk -v v="$v" 'BEGIN { printf "%.2f us", v }') |"
    if [ "$mpi" = ftmpi ]; then ft=$v
    elif [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
  done
  echo "| latency $(human_size "$size") |$cells $(ratio "$ft" "$best" lat "$target") |"
}
ratio() {  # ratio FTMPI BEST lat|bw TARGET: the ratio cell and the target cell
  local ft=$1 best=$2 kind=$3 target=$4
  if [ -z "$ft" ] || [ -z "$best" ]; then echo "- | $target"; return; fi
  awk -v f="$ft" -v b="$best" -v k="$kind" -v t="$target" 'BEGIN {
    r = b > 0 ? f / b : 0
    verdict = ""
    if (t != "-") {
      limit = t; gsub(/[^0-9.]/, "", limit)
      ok = (k == "lat") ? r <= limit : r >= limit
      verdict = ok ? " (met)" : " (missed)"
    }
    printf "%.2fx | %s%s", r, t, verdict
  }'
}
row_bandwidth() {
  local cells="" ft="" best="" v size
  for mpi in "${names[@]}"; do
    read -r v size <<<"$(peak_of "$mpi")" || true
    if [ -z "${v:-}" ]; then cells+=" - |"; continue; fi
    cells+=" $(awk -v v="$v" 'BEGIN { printf "%.2f GB/s", v / 1000 }') ($(human_size "$size")) |"
    if [ "$mpi" = ftmpi ]; then ft=$v
    elif [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$v; fi
    v=""
  done
  echo "| peak bandwidth |$cells $(ratio "$ft" "$best" bw ">= 1.0") |"
}

# Every size, for the record.
{
  echo "| what | ${titles[0]} | ${titles[1]} | ${titles[2]} |"
  echo "|---|---:|---:|---:|"
  for kind in lat bw; do
    # shellcheck disable=SC2013 # the words are message sizes
    for size in $(awk -v k="$kind" '$2 == k { print $3 }' "$work/medians.txt" | sort -nu); do
      line="| $kind $(human_size "$size") |"
      for mpi in "${names[@]}"; do
        v=$(median_of "$mpi" "$kind" "$size")
        if [ -z "$v" ]; then line+=" - |"
        elif [ "$kind" = lat ]; then line+=" $(awk -v v="$v" 'BEGIN { printf "%.2f us", v }') |"
        else line+=" $(awk -v v="$v" 'BEGIN { printf "%.0f MB/s", v }') |"; fi
      done
      echo "$line"
    done
  done
} >"$work/all-sizes.md"

echo
echo "Shared memory, 2 ranks bound to 2 cores; $date_run on $(hostname) ($cpu, $(nproc) CPUs);"
echo "load average (1, 5, 15 min) $load_start at the start; during the runs kept, other tasks were runnable"
echo "in $interference of $total_samples samples, and a cache line took $probes one way between the two cores;"
echo "$repeats disturbed runs repeated; median of $rounds interleaved rounds"
echo "(\`scripts/compare-mpi.sh --rounds $rounds${bench_args[*]:+ -- ${bench_args[*]}}\`)."
echo
echo "| what | ${titles[0]} | ${titles[1]} | ${titles[2]} | ftmpi / best peer | target |"
echo "|---|---:|---:|---:|---:|---|"
row_latency 0 "<= 1.2"
row_latency 8192 "-"
row_latency 1048576 "-"
row_bandwidth
echo
echo "Every size: $work/all-sizes.md; raw outputs: $work/raw/"
