#!/usr/bin/env bash
# job_with_counters.sh [--until REGEX]... "CHECK..." COMMAND... : runs an ftrun job that prints its counters
# (engine.report=true), shows its output, and passes when the job succeeded and check_counters.sh agrees.
#
# With --until, the job's work follows events instead of a clock: an argument @STOP_FILE@ in COMMAND is
# replaced by the path of a file that does not exist yet (bulk_transfer -u @STOP_FILE@ goes on until it
# does), and the file is created once the job's output has matched every REGEX, each on a line after the
# previous one's (e.g. a rail down, then back up). A fast machine thus cannot finish the work before the
# events, and a slow one simply takes longer. After FTMPI_TEST_EVENT_WAIT seconds (default 120) without
# them the file is created anyway, so that the job ends and the checks say what was missing.
set -uo pipefail
events=()
while [ "${1:-}" = --until ]; do
  events+=("$2")
  shift 2
done
checks=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
stop=$work/stop
command=()
for arg in "$@"; do
  if [ "$arg" = @STOP_FILE@ ]; then command+=("$stop"); else command+=("$arg"); fi
done

# Line number (1-based) of the first line after line $2 that matches $1, or nothing.
line_after() {
  awk -v re="$1" -v after="$2" 'NR > after && $0 ~ re { print NR; exit }' "$log"
}

"${command[@]}" > "$log" 2>&1 &
job=$!
if [ "${#events[@]}" -gt 0 ]; then
  deadline=$((SECONDS + ${FTMPI_TEST_EVENT_WAIT:-120}))
  at=0
  for event in "${events[@]}"; do
    found=
    while kill -0 "$job" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
      found=$(line_after "$event" "$at")
      [ -z "$found" ] || break
      sleep 0.05
    done
    [ -n "$found" ] || found=$(line_after "$event" "$at")
    if [ -z "$found" ]; then
      echo "job_with_counters: the job never printed a line matching '$event' (after line $at); ending its work"
      break
    fi
    echo "job_with_counters: '$event' seen at line $found of the job's output"
    at=$found
  done
  touch "$stop"
fi
wait "$job"
status=$?
grep -v '^progress ' "$log"
[ "$status" -eq 0 ] || { echo "FAIL: the job exited with status $status" >&2; exit 1; }
# shellcheck disable=SC2086
"$(dirname "$0")/check_counters.sh" "$log" $checks
