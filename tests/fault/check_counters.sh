#!/usr/bin/env bash
# check_counters.sh LOG CHECK... : checks the "ftmpi counters:" lines a job printed with engine.report=true.
#   retransmits   some frames were retransmitted
#   corruption    faults were injected (FaultPath corrupted > 0) and every one that reached a receiving
#                 engine was detected: the sum over ranks of dropped_malformed + dropped_bad_payload equals
#                 the sum of corrupted, less at most the frames no engine read (below)
#   failover      some rail went down (rails_down > 0)
#   failback      ... and came back (rails_up > 0)
#   placed        UDP payloads were received straight into place (frames_placed > 0 on the "udp" lines)
#   copied_after_send  eager frames left from the send buffer and were copied for resending after
#                 (frames_copied_after_send > 0 on the "engine" lines)
#   pool_drops    the emulated verbs device dropped datagrams that found no receive posted
#                 (dropped_no_recv > 0 on the "verbs_device" lines)
# Prints the totals; exits 1 naming the first check that failed.
#
# Frames no engine read: every frame a FaultPath let onto the wire (frames_seen - dropped - blackholed +
# duplicated) that no engine counted in frames_received. Over real UDP a datagram can be lost in the
# kernel (a full socket buffer while the receiver is descheduled) or still wait unread when its receiver
# exits (a late resend), and a corrupted one among them cannot be detected. When every frame was read, the
# corruption check is exact; otherwise the undetected ones must not outnumber the unread ones. More
# detections than injections always fail (a good frame refused). With two ranks every frame one sends
# goes to the other, so the check holds for each direction on its own (a frame lost on the way to rank 1
# cannot excuse a corruption rank 0 missed); with more it holds for the sums.
set -euo pipefail
log=${1:?usage: check_counters.sh LOG CHECK...}
shift
[ -r "$log" ] || { echo "check_counters: cannot read $log" >&2; exit 2; }

# Sum of key=value over the lines of one kind ("engine", "rail", "faults", "udp").
sum() {
  awk -v kind="$1" -v key="$2" '
    $1 == "ftmpi" && $2 == "counters:" && $3 == kind {
      for (i = 4; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) total += kv[2] }
    }
    END { print total + 0 }' "$log"
}

# The same for the lines of one rank.
sum_rank() {
  awk -v kind="$1" -v key="$2" -v rank="rank=$3" '
    $1 == "ftmpi" && $2 == "counters:" && $3 == kind && $4 == rank {
      for (i = 5; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) total += kv[2] }
    }
    END { print total + 0 }' "$log"
}

# check_corruption INJECTED DETECTED UNREAD WHAT: fails the job check unless every injected corruption was
# detected, or the undetected ones fit within the unread frames ("-": no accounting, no allowance).
check_corruption() {
  local injected=$1 detected=$2 unread=$3 what=$4
  [ "$detected" -le "$injected" ] ||
    { echo "FAIL: $what: $detected frames refused as corrupt, only $injected corrupted" >&2; exit 1; }
  [ "$unread" != - ] || unread=0
  [ $((injected - detected)) -le "$unread" ] || {
    echo "FAIL: $what: $injected corruptions injected, $detected detected, and only $unread frames were never read" >&2
    exit 1
  }
  [ "$detected" -eq "$injected" ] ||
    echo "check_counters: $what: $((injected - detected)) corruptions undetected, all within the $unread frames no engine read"
}

# Frames rank $1's fault layers put on the wire that rank $2's engine did not read ("-" when more were read).
unread_between() {
  local wire
  wire=$(($(sum_rank faults frames_seen "$1") - $(sum_rank faults dropped "$1") - $(sum_rank faults blackholed "$1") +
          $(sum_rank faults duplicated "$1")))
  local left=$((wire - $(sum_rank engine frames_received "$2")))
  if [ "$left" -ge 0 ]; then echo "$left"; else echo -; fi
}

engines=$(grep -c '^ftmpi counters: engine ' "$log" || true)
[ "$engines" -gt 0 ] || { echo "check_counters: no counters in $log (engine.report=true?)" >&2; exit 1; }
retransmits=$(sum engine retransmits)
malformed=$(sum engine dropped_malformed)
bad_payload=$(sum engine dropped_bad_payload)
corrupted=$(sum faults corrupted)
seen=$(sum faults frames_seen)
fault_dropped=$(sum faults dropped)
blackholed=$(sum faults blackholed)
duplicated=$(sum faults duplicated)
received=$(sum engine frames_received)
faults=$(grep -c '^ftmpi counters: faults ' "$log" || true)
unread=-  # without fault paths there is nothing to account
[ "$faults" -eq 0 ] || unread=$((seen - fault_dropped - blackholed + duplicated - received))
# More read than the fault paths sent: some paths have no fault layer, so no frame can be accounted.
[ "$unread" = - ] || [ "$unread" -ge 0 ] || unread=-
down=$(sum engine rails_down)
up=$(sum engine rails_up)
echo "counters of $engines ranks: retransmits=$retransmits corrupted=$corrupted detected=$((malformed + bad_payload))" \
     "(malformed=$malformed bad_payload=$bad_payload) unread=$unread rails_down=$down rails_up=$up"

for check in "$@"; do
  case "$check" in
    retransmits) [ "$retransmits" -gt 0 ] || { echo "FAIL: no retransmission" >&2; exit 1; } ;;
    corruption)
      [ "$corrupted" -gt 0 ] || { echo "FAIL: no corruption was injected" >&2; exit 1; }
      if [ "$engines" -eq 2 ]; then
        for from in 0 1; do
          to=$((1 - from))
          check_corruption "$(sum_rank faults corrupted "$from")" \
            $(($(sum_rank engine dropped_malformed "$to") + $(sum_rank engine dropped_bad_payload "$to"))) \
            "$(unread_between "$from" "$to")" "rank $from to rank $to"
        done
      else
        check_corruption "$corrupted" $((malformed + bad_payload)) "$unread" "all ranks"
      fi ;;
    failover) [ "$down" -gt 0 ] || { echo "FAIL: no rail went down" >&2; exit 1; } ;;
    failback) [ "$up" -gt 0 ] || { echo "FAIL: no rail came back" >&2; exit 1; } ;;
    placed) [ "$(sum udp frames_placed)" -gt 0 ] || { echo "FAIL: no UDP payload was received into place" >&2; exit 1; } ;;
    copied_after_send) [ "$(sum engine frames_copied_after_send)" -gt 0 ] ||
                         { echo "FAIL: no eager frame left from the send buffer before its copy" >&2; exit 1; } ;;
    pool_drops) [ "$(sum verbs_device dropped_no_recv)" -gt 0 ] ||
                  { echo "FAIL: the emulated verbs device dropped no datagram for want of a posted receive" >&2; exit 1; } ;;
    *) echo "check_counters: unknown check '$check'" >&2; exit 2 ;;
  esac
done
