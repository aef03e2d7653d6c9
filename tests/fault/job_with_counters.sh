#!/usr/bin/env bash
# job_with_counters.sh "CHECK..." COMMAND... : runs an ftrun job that prints its counters
# (engine.report=true), shows its output, and passes when the job succeeded and check_counters.sh agrees.
set -uo pipefail
checks=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" > "$log" 2>&1
status=$?
grep -v '^progress ' "$log"
[ "$status" -eq 0 ] || { echo "FAIL: the job exited with status $status" >&2; exit 1; }
# shellcheck disable=SC2086
exec "$(dirname "$0")/check_counters.sh" "$log" $checks
