#!/usr/bin/env bash
# Measures ftmpi beside Open MPI and MPICH in one run and prints one Markdown table with ftmpi's ratio to
# the best peer (docs/benchmarks.md: only ratios measured side by side count).
#
#   scripts/compare-mpi.sh [--rounds R] [--mpis "ftmpi ompi mpich"] [--build-dir D]
#                          [--no-coll | --coll-only] [--coll-ranks "2 4"] [--coll-args "ARGS"]
#                          [-- benchmark options]
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
# disturbed runs must be repeated (see below). Options after -- go to mpi_pingpong.
#
# Collectives (skipped with --no-coll; --coll-only runs nothing else): in the same rounds, after the
# point-to-point runs, bench/mpi/mpi_coll.c (MPI_Barrier; MPI_Bcast from root 0 and MPI_Allreduce of
# doubles, 8 B, 64 KB, 1 MB; OSU's method) at each rank count of --coll-ranks (default "2 4"), the three
# MPIs interleaved again, with the same disturbance handling; a second table follows the first, with the
# target of 1.2 times the best peer. --coll-args passes options to mpi_coll (e.g. "-r 7 -T 0.5").
# As many ranks as cores: bound, as above. More ranks than cores (4 on this 2-core VM) must share the cores,
# so nothing is bound (a rank that waits must not sit on the only core its peer may use) and each MPI is
# told to give the core away while it waits, where it can be:
#
#   ftrun -n N --bind-to none                (a waiting rank spins engine.progress.spin rounds, then
#                                             calls sched_yield: ftmpi's default, nothing to set)
#   mpirun.openmpi -np N --oversubscribe --bind-to none --mca btl self,vader --mca mpi_yield_when_idle 1
#                                            (Open MPI sets the yield itself when it sees the oversubscription;
#                                             said explicitly so it cannot be missed)
#   mpiexec.mpich -n N -bind-to none         (ch4:ucx has no yield setting: MPIR_CVAR_POLLS_BEFORE_YIELD
#                                             belongs to ch3:nemesis; its ranks spin until preempted)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

rounds=3
mpis="ftmpi ompi mpich"
build=${BUILD_DIR:-build/release}
bench_args=()
do_p2p=1
do_coll=1
coll_ranks="2 4"
coll_args=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --mpis) mpis=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-coll) do_coll=0; shift ;;
    --coll-only) do_p2p=0; shift ;;
    --coll-ranks) coll_ranks=$2; shift 2 ;;
    --coll-args) coll_args=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare-mpi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $rounds in '' | *[!0-9]* | 0) echo "compare-mpi.sh: --rounds needs a positive integer" >&2; exit 2 ;; esac
if [ "$do_p2p" = 0 ] && [ "$do_coll" = 0 ]; then
  echo "compare-mpi.sh: --no-coll and --coll-only leave nothing to run" >&2
  exit 2
fi
for n in $coll_ranks; do
  case $n in '' | *[!0-9]* | 0) echo "compare-mpi.sh: --coll-ranks needs positive integers" >&2; exit 2 ;; esac
done
# shellcheck disable=SC2206 # the options are words
coll_argv=($coll_args)

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
cores=$(nproc)
launch_coll() {  # launch_coll MPI RANKS PROGRAM ARGS...: bound when the cores suffice, else shared (header)
  local mpi=$1 n=$2; shift 2
  if [ "$n" -le "$cores" ]; then
    case $mpi in
      ftmpi) echo "$prefix/bin/ftrun" -n "$n" --bind-to core "$@" ;;
      ompi) echo mpirun.openmpi -np "$n" --bind-to core --mca btl self,vader "${ompi_root[@]}" "$@" ;;
      mpich) echo mpiexec.mpich -n "$n" -bind-to core "$@" ;;
    esac
  else
    case $mpi in
      ftmpi) echo "$prefix/bin/ftrun" -n "$n" --bind-to none "$@" ;;
      ompi) echo mpirun.openmpi -np "$n" --oversubscribe --bind-to none --mca btl self,vader \
                 --mca mpi_yield_when_idle 1 "${ompi_root[@]}" "$@" ;;
      mpich) echo mpiexec.mpich -n "$n" -bind-to none "$@" ;;
    esac
  fi
}

# ---- Run them interleaved ----
date_run=$(date -u '+%Y-%m-%d %H:%M UTC')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
if awk -v l="$load_start" 'BEGIN { exit !(l + 0 >= 1.0) }'; then
  echo "compare-mpi.sh: warning: load average $load_start at the start; the figures will be noisy" >&2
fi
# Two kinds of noise are caught, and a disturbed run is repeated (5 s later, at most twice; a run on a
# slow host up to five times, 10 s apart, since that state can last a minute):
# - other jobs: while a run goes on, a sampler counts the samples in which more tasks were runnable than
#   the ranks and itself; more than a tenth is disturbed;
# - the host: on a VM the time a cache line takes between the two cores jumps (35 ns to 100+ ns here) when
#   the hypervisor moves the virtual CPUs, and every MPI's latency jumps with it for seconds. A probe
#   before and after each run measures it (bench/mpi/cacheline_pingpong.c); 1.5 times the best so far is
#   disturbed.
probe() { "$work/cacheline" | awk '{ print $2 }'; }
best_probe=$(probe)
monitor() {  # monitor FILE LIMIT: samples until SIGTERM, then writes "samples busy" to FILE
  local file=$1 limit=$2 samples=0 busy=0 running
  trap 'echo "$samples $busy" >"$file"; exit 0' TERM
  while :; do
    read -r _ _ _ running _ </proc/loadavg
    samples=$((samples + 1))
    if [ "${running%/*}" -gt "$limit" ]; then busy=$((busy + 1)); fi
    sleep 0.2
  done
}
monitor_pid=""
trap '[ -z "$monitor_pid" ] || kill "$monitor_pid" 2>/dev/null || true' EXIT
# Per kind of run (p2p, coll): samples, busy samples and repeated runs, over the runs kept.
declare -A kept_samples=([p2p]=0 [coll]=0) kept_busy=([p2p]=0 [coll]=0) repeated=([p2p]=0 [coll]=0)
declare -A slow_kept=([p2p]=0 [coll]=0)  # runs kept although the host was still slow
measure() {  # measure KIND OUT RANKS LABEL COMMAND...: runs COMMAND into OUT, again if disturbed
  local kind=$1 out=$2 ranks=$3 label=$4 attempt before after samples busy slow_host last=3
  shift 4
  for ((attempt = 1; attempt <= last; ++attempt)); do
    before=$(probe)
    monitor "$out.monitor" $((ranks + 1)) &
    monitor_pid=$!
    if ! timeout 300 "$@" >"$out" 2>"$out.err"; then
      echo "compare-mpi.sh: $label failed in round $r; its output:" >&2
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
      echo "compare-mpi.sh: $label delivered wrong data in round $r:" >&2
      cat "$out" "$out.err" >&2
      exit 1
    fi
    if [ "$slow_host" = 1 ]; then last=6; fi
    if { [ $((busy * 10)) -le "$samples" ] && [ "$slow_host" = 0 ]; } || [ "$attempt" -ge "$last" ]; then break; fi
    echo "compare-mpi.sh: round $r: $label disturbed (other tasks in $busy of $samples samples; cache line" \
         "$before ns before, $after ns after, best $best_probe ns); repeating it" >&2
    repeated[$kind]=$((repeated[$kind] + 1))
    if [ "$slow_host" = 1 ]; then sleep 10; else sleep 5; fi
  done
  if [ "$slow_host" = 1 ]; then slow_kept[$kind]=$((slow_kept[$kind] + 1)); fi
  kept_samples[$kind]=$((kept_samples[$kind] + samples))
  kept_busy[$kind]=$((kept_busy[$kind] + busy))
}
for ((r = 1; r <= rounds; ++r)); do
  if [ "$do_p2p" = 1 ]; then
    for mpi in $mpis; do
      # shellcheck disable=SC2046 # launch prints a command line of plain words
      measure p2p "$work/raw/round$r-$mpi.txt" 2 "$mpi" $(launch "$mpi" "$work/pp-$mpi") "${bench_args[@]}"
      echo "compare-mpi.sh: round $r/$rounds: $mpi done" >&2
    done
  fi
  if [ "$do_coll" = 1 ]; then
    for n in $coll_ranks; do
      for mpi in $mpis; do
        # shellcheck disable=SC2046 # launch_coll prints a command line of plain words
        measure coll "$work/raw/coll-n$n-round$r-$mpi.txt" "$n" "$mpi (collectives, $n ranks)" \
          $(launch_coll "$mpi" "$n" "$work/coll-$mpi") "${coll_argv[@]}"
        echo "compare-mpi.sh: round $r/$rounds: $mpi collectives at $n ranks done" >&2
      done
    done
  fi
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
names=(ftmpi ompi mpich)
titles=("ftmpi" "Open MPI" "MPICH")
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
human_size() { awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) print b / 1048576 " MB"; else if (b >= 1024 && b % 1024 == 0) print b / 1024 " KB"; else print b " B" }'; }
# The median of each key's values: reads "KEY... VALUE" lines, prints "KEY... MEDIAN" (unsorted).
medians() {
  awk '
    { key = $1; for (i = 2; i < NF; ++i) key = key " " $i; c = ++count[key]; val[key, c] = $NF }
    END {
      for (key in count) {
        n = count[key]
        for (i = 1; i <= n; ++i) v[i] = val[key, i]
        for (i = 2; i <= n; ++i) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; --j) v[j + 1] = v[j]; v[j + 1] = x }
        m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        print key, m
      }
    }'
}

# ---- The point-to-point table (unchanged by the collectives) ----
median_of() { awk -v m="$1" -v k="$2" -v s="$3" '$1 == m && $2 == k && $3 == s { print $4 }' "$work/medians.txt"; }
peak_of() { awk -v m="$1" '$1 == m && $2 == "bw" && $4 > best { best = $4; size = $3 } END { if (best) print best, size }' "$work/medians.txt"; }

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

p2p_table() {
  total_samples=${kept_samples[p2p]}
  total_busy=${kept_busy[p2p]}
  repeats=${repeated[p2p]}
  interference=$(awk -v s="$total_samples" -v b="$total_busy" 'BEGIN { printf "%.0f%%", s ? 100 * b / s : 0 }')
  # The probes around the runs that were kept (the last attempt of each).
  probes=$(cat "$work"/raw/round*-*.txt.probe | sort -n | awk '{ v[NR] = $1 } END { printf "median %s ns (%s to %s)", v[int((NR + 1) / 2)], v[1], v[NR] }')

  # Medians per (MPI, kind, size) over the rounds.
  awk '
    FNR == 1 { n = split(FILENAME, parts, "-"); mpi = parts[n]; sub(/\.txt$/, "", mpi) }
    ($1 == "lat" || $1 == "bw") && NF == 3 { print mpi, $1, $2, $3 }' "$work"/raw/round*-*.txt |
    medians | sort -k1,1 -k2,2 -k3,3n >"$work/medians.txt"

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
  echo "$repeats disturbed runs repeated (${slow_kept[p2p]} kept with the host still slow); median of $rounds interleaved rounds"
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
}

coll_table() {
  local n op size line mpi v ft best
  # Medians per (MPI, ranks, operation, size) over the rounds; files are coll-nRANKS-roundR-MPI.txt.
  awk '
    FNR == 1 { f = FILENAME; sub(/.*\//, "", f); sub(/\.txt$/, "", f); split(f, parts, "-"); np = substr(parts[2], 2); mpi = parts[4] }
    ($1 == "barrier" || $1 == "bcast" || $1 == "allreduce") && NF == 3 { print mpi, np, $1, $2, $3 }' \
    "$work"/raw/coll-n*-round*-*.txt | medians | sort -k1,1 -k2,2n -k3,3 -k4,4n >"$work/coll-medians.txt"
  local probes_coll interference_coll
  interference_coll=$(awk -v s="${kept_samples[coll]}" -v b="${kept_busy[coll]}" 'BEGIN { printf "%.0f%%", s ? 100 * b / s : 0 }')
  probes_coll=$(cat "$work"/raw/coll-n*-round*-*.txt.probe | sort -n | awk '{ v[NR] = $1 } END { printf "median %s ns (%s to %s)", v[int((NR + 1) / 2)], v[1], v[NR] }')
  echo
  echo "Collectives on one host, $(awk -v l="$coll_ranks" 'BEGIN { n = split(l, w, " "); for (i = 1; i <= n; ++i) printf "%s%s", w[i], i == n ? "" : i == n - 1 ? " and " : ", " }') ranks ($cores cores: more ranks than cores share them, unbound,"
  echo "each MPI yielding where it can); $date_run on $(hostname) ($cpu, $cores CPUs); load average"
  echo "(1, 5, 15 min) $load_start at the start, $load_end at the end; during the runs kept, other tasks were"
  echo "runnable in $interference_coll of ${kept_samples[coll]} samples, and a cache line took $probes_coll one way"
  echo "between the two cores; ${repeated[coll]} disturbed runs repeated (${slow_kept[coll]} kept with the host still slow);"
  echo "median of $rounds interleaved rounds of the"
  echo "average over ranks of each rank's mean time per call (OSU's method; bcast from root 0, allreduce MPI_SUM"
  echo "on doubles) (\`scripts/compare-mpi.sh --rounds $rounds${coll_args:+ --coll-args \"$coll_args\"}\`)."
  echo
  echo "| what | ranks | ${titles[0]} | ${titles[1]} | ${titles[2]} | ftmpi / best peer | target |"
  echo "|---|---:|---:|---:|---:|---:|---|"
  for n in $coll_ranks; do
    for op in barrier bcast allreduce; do
      # shellcheck disable=SC2013 # the words are message sizes
      for size in $(awk -v n="$n" -v o="$op" '$2 == n && $3 == o { print $4 }' "$work/coll-medians.txt" | sort -nu); do
        line="| $op$([ "$op" = barrier ] || echo " $(human_size "$size")") | $n |"
        ft=""
        best=""
        for mpi in "${names[@]}"; do
          v=$(awk -v m="$mpi" -v n="$n" -v o="$op" -v s="$size" '$1 == m && $2 == n && $3 == o && $4 == s { print $5 }' "$work/coll-medians.txt")
          if [ -z "$v" ]; then line+=" - |"; continue; fi
          line+=" $(awk -v v="$v" 'BEGIN { printf "%.2f us", v }') |"
          if [ "$mpi" = ftmpi ]; then ft=$v
          elif [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
        done
        echo "$line $(ratio "$ft" "$best" lat "<= 1.2") |"
      done
    done
  done
  echo
  echo "Medians: $work/coll-medians.txt; raw outputs: $work/raw/coll-*"
}

if [ "$do_p2p" = 1 ]; then p2p_table; fi
if [ "$do_coll" = 1 ]; then coll_table; fi
