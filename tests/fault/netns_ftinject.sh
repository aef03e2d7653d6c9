#!/usr/bin/env bash
# netns_ftinject.sh FTRUN FTINJECT PROGRAM : an ftinject drill across two simulated hosts.
#
# Runs inside `simhosts.sh session` (hosts ftA and ftB, rails r1 and r2, the blackhole guard). ftinject
# runs the drill below against a job it launches: ftrun on ftA starts rank 0 on ftA and rank 1 on ftB
# over both rails, and PROGRAM (bulk_transfer) moves at least 512 MB from rank 0 to rank 1 with every
# byte checked, going on until the drill's last step has ended (--done-file), so that no machine is fast
# enough to finish first. ftinject itself only talks to ftrun's control socket; every packet of the job
# stays inside the namespaces. The drill:
#   1% corruption on rail r1 for 3 s; a blackhole of rail r2 for 2 s; r2's link taken down on ftB with
#   `ip link` and brought up 2 s later; then 2 s more for r2 to be probed back into service.
# Passes when the drill's verdict passes (exit 0: every expectation holds) and its counts are the ranks'
# (verdict_counts.sh against their engine.report counters).
set -euo pipefail
ftrun=${1:?usage: netns_ftinject.sh FTRUN FTINJECT PROGRAM}
fti=${2:?ftinject}
program=${3:?program}
here=$(cd "$(dirname "$0")" && pwd)
simhosts=$here/../netns/simhosts.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR=$work/run  # this drill's job only
mkdir -m 0700 "$XDG_RUNTIME_DIR"
cat > "$work/netns.drill" <<DRILL
# Three failures, one after the other, during a checked transfer across two hosts.
at 1s     inject corrupt=0.01,seed=21 rail=r1 for=3s
at 5s     inject blackhole rail=r2 for=2s
at 8s     run $simhosts link ftB 2 down
at 10s    run $simhosts link ftB 2 up
# The transfer ends once the last step has (--done-file): this one keeps it going while r2 is probed
# back into service (failback), which the link coming up only starts.
at 12s    run true
expect exit 0
expect corruption_detected
expect corrupt_bytes 0
expect stall < 5s
expect failback < 5s
expect rails_down >= 1
expect injected_corrupted > 0
expect peers_lost = 0
DRILL
status=0
"$fti" drill "$work/netns.drill" --json --timeline "$work/netns.timeline.zst" --done-file "$work/stop" -- \
  "$simhosts" exec ftA "$ftrun" -n 2 --host ftA,ftB --launch-agent "$simhosts agent" --rails r1,r2 --timeout 400 \
  --param engine.report=true --param engine.rail.probe_max=100ms "$program" -m 512 -s 262144 -u "$work/stop" \
  > "$work/verdict.json" 2> "$work/drill.log" || status=$?
grep -v '^ftmpi counters: ' "$work/drill.log" | tail -30
cat "$work/verdict.json"
"$fti" timeline "$work/netns.timeline.zst" | grep -E 'step:|down|disabled|peer_lost' | head -40 || true
[ "$status" -eq 0 ] || { echo "FAIL: the drill exited $status" >&2; exit 1; }
"$here/../tools/verdict_counts.sh" "$work/verdict.json" "$work/drill.log"
