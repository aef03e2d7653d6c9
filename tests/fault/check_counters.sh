#!/usr/bin/env bash
# check_counters.sh LOG CHECK... : checks the "ftmpi counters:" lines a job printed with engine.report=true.
#   retransmits   some frames were retransmitted
#   corruption    faults were injected (FaultPath corrupted > 0) and every one was detected: the sum over
#                 ranks of dropped_malformed + dropped_bad_payload equals the sum of corrupted
#   failover      some rail went down (rails_down > 0)
#   failback      ... and came back (rails_up > 0)
# Prints the totals; exits 1 naming the first check that failed.
set -euo pipefail
log=${1:?usage: check_counters.sh LOG CHECK...}
shift
[ -r "$log" ] || { echo "check_counters: cannot read $log" >&2; exit 2; }

# Sum of key=value over the lines of one kind ("engine", "rail", "faults").
sum() {
  awk -v kind="$1" -v key="$2" '
    $1 == "ftmpi" && $2 == "counters:" && $3 == kind {
      for (i = 4; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) total += kv[2] }
    }
    END { print total + 0 }' "$log"
}

engines=$(grep -c '^ftmpi counters: engine ' "$log" || true)
[ "$engines" -gt 0 ] || { echo "check_counters: no counters in $log (engine.report=true?)" >&2; exit 1; }
retransmits=$(sum engine retransmits)
malformed=$(sum engine dropped_malformed)
bad_payload=$(sum engine dropped_bad_payload)
corrupted=$(sum faults corrupted)
down=$(sum engine rails_down)
up=$(sum engine rails_up)
echo "counters of $engines ranks: retransmits=$retransmits corrupted=$corrupted detected=$((malformed + bad_payload))" \
     "(malformed=$malformed bad_payload=$bad_payload) rails_down=$down rails_up=$up"

for check in "$@"; do
  case "$check" in
    retransmits) [ "$retransmits" -gt 0 ] || { echo "FAIL: no retransmission" >&2; exit 1; } ;;
    corruption)
      [ "$corrupted" -gt 0 ] || { echo "FAIL: no corruption was injected" >&2; exit 1; }
      [ $((malformed + bad_payload)) -eq "$corrupted" ] ||
        { echo "FAIL: $corrupted corruptions injected, $((malformed + bad_payload)) detected" >&2; exit 1; } ;;
    failover) [ "$down" -gt 0 ] || { echo "FAIL: no rail went down" >&2; exit 1; } ;;
    failback) [ "$up" -gt 0 ] || { echo "FAIL: no rail came back" >&2; exit 1; } ;;
    *) echo "check_counters: unknown check '$check'" >&2; exit 2 ;;
  esac
done
