#!/usr/bin/env bash
# verdict_counts.sh VERDICT_JSON LOG : checks that a drill's verdict (ftinject drill --json) counts what the
# ranks counted: LOG holds their "ftmpi counters:" lines (engine.report=true, at MPI_Finalize). The drill
# must inject nothing before it begins, so that "since the drill began" is "since the job began":
#   injected_corrupted > 0    measured = the sum of the fault layers' corrupted
#   corruption_detected       "D of I detected" with D = dropped_malformed + dropped_bad_payload, I as above
# Exits 1 naming the first difference.
set -euo pipefail
verdict=${1:?usage: verdict_counts.sh VERDICT_JSON LOG}
log=${2:?usage: verdict_counts.sh VERDICT_JSON LOG}
sum() {
  awk -v kind="$1" -v key="$2" '$1 == "ftmpi" && $2 == "counters:" && $3 == kind {
    for (i = 4; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) t += kv[2] } } END { print t + 0 }' "$log"
}
grep -q '^ftmpi counters: engine ' "$log" || { echo "FAIL: no counters in $log (engine.report=true?)" >&2; exit 1; }
measured() { jq -r --arg e "$1" '.verdict[] | select(.expectation == $e) | .measured' "$verdict"; }
corrupted=$(sum faults corrupted)
injected=$(measured "injected_corrupted > 0")
[ "$injected" = "$corrupted" ] || { echo "FAIL: the verdict says $injected corrupted, the ranks $corrupted" >&2; exit 1; }
want="$(($(sum engine dropped_malformed) + $(sum engine dropped_bad_payload))) of $corrupted detected"
got=$(measured corruption_detected)
[ "$got" = "$want" ] || { echo "FAIL: the verdict says '$got', the ranks '$want'" >&2; exit 1; }
echo "verdict_counts: the verdict's counts are the ranks' ($want)"
