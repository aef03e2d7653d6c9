#!/usr/bin/env bash
# netns_drill.sh DRILL FTRUN PROGRAM : one end-to-end fault drill across two simulated hosts.
#
# Runs inside `simhosts.sh session` (which creates hosts ftA and ftB with rails r1, r2 and the
# blackhole guard, and removes them afterwards). ftrun runs on ftA as a head node and starts rank 0 on
# ftA and rank 1 on ftB (through `simhosts.sh agent`), over both rails, with engine.report=true. PROGRAM
# is bulk_transfer: 256 MB from rank 0 to rank 1, every byte checked. The drill:
#
#   link-down   rail 1 of ftB goes down (ip link set down) at 20% of the transfer and comes back once a
#               rank has logged the rail down; the transfer goes on (bulk_transfer -u) until a rank has
#               logged it back up, so a fast machine cannot finish first: the counters must show a rail
#               down (failover) and up again (failback)
#   nft-loss    nftables drops 5% of UDP packets on ftB's rail 1 for the whole transfer: retransmissions
#   corrupt     FaultPath corrupts 1% of the frames every rank sends: every one detected and repaired
#   verbs       the same over the verbs path on the emulated UD device, its queue pairs on rail r1 of
#               each host (path.verbs.emulated.address=r1): verbs between two hosts
#   ftpath-disable  (FTPATH, the 4th argument) at 10% of the transfer `ftpath disable` rail r2 on ftA:
#               its bytes stop growing while 32 MB more move; disabling r1 too is refused (exit 4);
#               `ftpath enable r2`: it comes back up and carries traffic again
#
# Passes when the job exits 0 (every byte intact) and the counters agree (check_counters.sh).
set -euo pipefail
drill=${1:?usage: netns_drill.sh link-down|nft-loss|corrupt|verbs|ftpath-disable FTRUN PROGRAM [FTPATH]}
ftrun=${2:?ftrun}
program=${3:?program}
ftpath=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
simhosts=$here/../netns/simhosts.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
stop=$work/stop
extra=()
until=()
checks=""
case $drill in
  link-down) checks="failover failback"; extra=(--param engine.rail.probe_max=100ms); until=(-u "$stop") ;;
  nft-loss) checks="retransmits"; "$simhosts" loss ftB 1 5 ;;
  corrupt) checks="retransmits corruption"; extra=(--fault corrupt=0.01,seed=5) ;;
  verbs) checks="retransmits corruption"
         extra=(--paths verbs --param path.verbs.device=emulated --param path.verbs.emulated.address=r1
                --fault corrupt=0.01,seed=6) ;;
  ftpath-disable)
    checks=""
    until=(-u "$stop")
    export XDG_RUNTIME_DIR=$work/run  # this drill's jobs only; ftrun records the job there
    mkdir -m 0700 "$XDG_RUNTIME_DIR" ;;
  *) echo "netns_drill.sh: unknown drill '$drill'" >&2; exit 2 ;;
esac

"$simhosts" exec ftA "$ftrun" -n 2 --host ftA,ftB --launch-agent "$simhosts agent" --rails r1,r2 \
  --timeout 400 --param engine.report=true "${extra[@]}" "$program" -m 256 "${until[@]}" >"$log" 2>&1 &
job=$!

# Waits until the job printed "progress N%" (or ended).
wait_progress() {
  while ! grep -q "^progress $1%" "$log"; do
    kill -0 "$job" 2>/dev/null || return 0
    sleep 0.05
  done
}
# Waits until the job printed a line matching $1 after line $2 (or ended, or 120 s passed); prints its
# line number, or nothing.
wait_line_after() {
  local deadline=$((SECONDS + 120)) found=
  while [ -z "$found" ] && kill -0 "$job" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
    found=$(awk -v re="$1" -v after="$2" 'NR > after && $0 ~ re { print NR; exit }' "$log")
    [ -n "$found" ] || sleep 0.05
  done
  echo "$found"
}
if [ "$drill" = link-down ]; then
  wait_progress 20
  "$simhosts" link ftB 1 down
  echo "netns_drill: rail 1 of ftB down at $(grep '^progress' "$log" | tail -1)"
  down=$(wait_line_after "is down" 0)
  "$simhosts" link ftB 1 up
  echo "netns_drill: rail 1 of ftB up at $(grep '^progress' "$log" | tail -1) (a rank logged it down: ${down:+line $down}${down:-no})"
  up=$(wait_line_after "is back up" "${down:-0}")
  echo "netns_drill: a rank logged it back up: ${up:+line $up}${up:-no}; the transfer may end"
  touch "$stop"
fi
fp() { "$simhosts" exec ftA env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$ftpath" "$@"; }
drill_fail() { echo "FAIL: $*" >&2; touch "$stop"; wait "$job"; grep -v '^progress ' "$log" | tail -20 >&2; exit 1; }
# Waits (at most 120 s) until the command $1 succeeds.
wait_until() {
  local deadline=$((SECONDS + 120))
  until eval "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}
if [ "$drill" = ftpath-disable ]; then
  wait_progress 10
  id=$(fp list --json | jq -r '.jobs[0].id // empty')
  [ -n "$id" ] || drill_fail "ftpath list does not show the job"
  # A rail by its interface: path indices count shared memory and rails alike.
  sent_on() { fp show "$id" --timeout 10 --json | jq "[.ranks[].rails[]? | select(.name | contains(\" $1 \")) | .bytes_sent] | add // 0"; }
  moved() { fp show "$id" --timeout 10 --json | jq '[.ranks[] | select(.rank == 1) | .totals.bytes_received] | add // 0'; }
  states_of() { fp show "$id" --timeout 10 --json | jq -r "[.ranks[].rails[]? | select(.name | contains(\" $1 \")) | .state] | unique | join(\",\")"; }
  fp disable "$id" r2 || drill_fail "ftpath disable r2 exited $?"
  [ "$(states_of r2)" = disabled ] || drill_fail "r2 is $(states_of r2)"
  frozen=$(sent_on r2) || drill_fail "ftpath show failed"
  from=$(moved) || drill_fail "ftpath show failed"
  wait_until '[ "$(moved)" -gt $((from + 33554432)) ]' || drill_fail "the transfer stalled on r1 alone"
  [ "$(sent_on r2)" -eq "$frozen" ] || drill_fail "r2 sent $(( $(sent_on r2) - frozen )) bytes while disabled"
  echo "netns_drill: r2 sent nothing while 32 MB moved on r1 alone"
  status=0
  fp disable "$id" r1 || status=$?
  [ "$status" -eq 4 ] || drill_fail "disabling the last rail exited $status, not 4"
  fp enable "$id" r2 || drill_fail "ftpath enable r2 exited $?"
  wait_until '[ "$(states_of r2)" = up ]' || drill_fail "r2 did not come back up ($(states_of r2))"
  back=$(sent_on r2) || drill_fail "ftpath show failed"
  from=$(moved) || drill_fail "ftpath show failed"
  wait_until '[ "$(moved)" -gt $((from + 33554432)) ]' || drill_fail "the transfer stalled after the enable"
  [ "$(sent_on r2)" -gt "$back" ] || drill_fail "r2 carries nothing since it was enabled"
  echo "netns_drill: r2 carries traffic again"
  touch "$stop"
fi
status=0
wait "$job" || status=$?
grep -v '^progress ' "$log"
[ "$status" -eq 0 ] || { echo "FAIL: the job exited with status $status" >&2; exit 1; }
if [ "$drill" = nft-loss ]; then "$simhosts" counters ftB | grep -i drop || true; fi
# The kernel's view (datagrams read, socket-buffer drops), to tell network loss from an engine's miss.
for h in ftA ftB; do
  echo "netns_drill: $h kernel $(ip netns exec "$h" awk '/^Udp:/ { if (n++) { for (i = 2; i <= NF; ++i) printf " %s=%s", k[i], $i } else split($0, k) }' /proc/net/snmp)"
done
# shellcheck disable=SC2086
"$here/check_counters.sh" "$log" $checks
