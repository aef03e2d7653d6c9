#!/usr/bin/env bash
# fault-soak.sh [--minutes M] [--seed S] [--build DIR]
#
# Cycles MPI jobs under changing faults for M minutes (default 30), to find what a short test cannot: a
# rare loss pattern, a leak, a hang after hours of failover. Not part of CI. Each round runs one of the
# checking programs of tests/mpi (pingpong, ring, collectives, datatypes, many_isend, memory_flood: each
# checks every byte it receives and exits non-zero otherwise) under ftrun over UDP on two loopback rails
# (127.0.0.1 and 127.0.0.2), with a fault plan drawn for that round from its seed:
#
#   drop, corrupt, dup and reorder on every frame, each up to a few percent;
#   one rail blackholed for a stretch of traffic, then back (failover and failback);
#   sometimes the other rail too, later, for a shorter stretch (both rails lost in turn);
#   sometimes a small eager credit (engine.eager_credit=64k) and the progress thread.
#
# Windows are volumes of traffic, so a fault follows the work on any machine. A round passes when the job
# exits 0 within its time limit. Prints a progress line per round and, at the end, the rounds, the
# failures with the command that replays each (the same seed gives the same plan), and what the engine
# counted over all rounds (frames resent, corrupted frames caught, duplicates dropped, rails down and up,
# and the longest a live peer stayed silent on a suspect rail before it answered: what
# engine.peer.timeout must exceed).
# Logs: <build>/fault-soak/round-N.log. Builds what it needs (Release, in DIR: build/release-tests by
# default). Exits 1 when a round failed.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=30
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
build=build/release-tests
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fault-soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || { echo "fault-soak: --minutes takes a whole number of minutes" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "fault-soak: --seed takes a number" >&2; exit 2; }

programs=(pingpong ring collectives datatypes many_isend memory_flood)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_WERROR=ON -DFTMPI_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target ftrun $(printf 'mpi_%s ' "${programs[@]}") >/dev/null
logs=$build/fault-soak
rm -rf "$logs"
mkdir -p "$logs"

RANDOM=$seed  # bash's generator: the whole soak replays from --seed
pick() { echo $((RANDOM % $1)); }
percent() { printf '0.%03d' $((RANDOM % ($1 * 10 + 1))); }  # 0 .. $1 %, three decimals

end=$(($(date +%s) + minutes * 60))
round=0
failed=()
declare -A total=()
while [ "$(date +%s)" -lt "$end" ]; do
  round=$((round + 1))
  program=${programs[$(pick ${#programs[@]})]}
  round_seed=$RANDOM$RANDOM
  ranks=2
  args=()
  case "$program" in
    ring) ranks=$((2 + $(pick 3))) ;;
    collectives) ranks=$((2 + $(pick 2))) ;;
    memory_flood) args=(2048 16384 64) ;;
  esac
  first=$((1 + $(pick 8)))MB
  plan="drop=$(percent 3),corrupt=$(percent 2),dup=$(percent 2),reorder=$(percent 3),seed=$round_seed"
  plan+=";blackhole,rail=$(pick 2),after=$first,for=$((1 + $(pick 16)))MB"
  if [ "$(pick 3)" -eq 0 ]; then plan+=";blackhole,rail=$(pick 2),after=$((24 + $(pick 16)))MB,for=4MB"; fi
  params=(--param path.kinds=udp --param path.rails=127.0.0.1,127.0.0.2 --param engine.report=true)
  if [ "$(pick 4)" -eq 0 ]; then params+=(--param engine.eager_credit=64k); fi
  if [ "$(pick 4)" -eq 0 ]; then params+=(--param engine.progress.thread=true); fi
  plan_file=$logs/round-$round.plan
  tr ';' '\n' <<<"$plan" >"$plan_file"
  command=("$build/tools/ftrun" -n "$ranks" --timeout 300 "${params[@]}" --fault-plan "$plan_file"
           "$build/tests/mpi/mpi_$program" "${args[@]}")
  log=$logs/round-$round.log
  echo "${command[*]}" >"$log"
  started=$(date +%s)
  if "${command[@]}" >>"$log" 2>&1; then
    verdict=ok
  else
    verdict="FAILED (exit $?)"
    failed+=("round $round: ${command[*]}   # plan: $plan")
  fi
  # Sum the engine lines of every rank: "ftmpi counters: engine rank=R key=value ...".
  while read -r key value; do
    if [ "$key" = longest_answered_silence_us ]; then  # a maximum, not a count
      [ "$value" -le "${total[$key]:-0}" ] || total[$key]=$value
    else
      total[$key]=$((${total[$key]:-0} + value))
    fi
  done < <(grep -h '^ftmpi counters: engine ' "$log" | tr ' ' '\n' | grep '=' | grep -v '^rank=' | tr '=' ' ')
  printf 'fault-soak: round %d, %s, %d ranks, %ds: %s (%d min left)\n' "$round" "$program" "$ranks" \
         $(($(date +%s) - started)) "$verdict" $(((end - $(date +%s) + 59) / 60))
done

echo
echo "fault-soak: $round rounds in $minutes minutes (seed $seed), ${#failed[@]} failed"
for f in "${failed[@]}"; do echo "  $f"; done
echo "engine counters over every rank of every round:"
for key in frames_sent retransmits dropped_bad_payload duplicates dropped_ahead dropped_malformed nacks_sent \
           rails_down rails_up credit_rendezvous peers_lost longest_answered_silence_us; do
  printf '  %-20s %s\n' "$key" "${total[$key]:-0}"
done
[ "${#failed[@]}" -eq 0 ]
