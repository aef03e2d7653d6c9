#!/usr/bin/env bash
# check_counters_test.sh : the corruption and placed checks of check_counters.sh against made-up counter logs.
# Rank 0 sends 1000 frames and corrupts 10, rank 1 sends 100 and corrupts 2; each case says how many
# frames rank 1 read, how many corruptions it detected, and whether the check must pass.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check_counters.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

# expect NAME LOG CHECK pass|fail: runs check_counters.sh LOG CHECK and counts a different verdict.
expect() {
  local got=pass
  "$check" "$2" "$3" >/dev/null 2>&1 || got=fail
  if [ "$got" != "$4" ]; then
    echo "FAIL: case $1: the check said $got, expected $4" >&2
    failures=$((failures + 1))
  fi
}

# case NAME RANK1_FRAMES_RECEIVED RANK1_BAD_PAYLOAD pass|fail [RANK0_FRAMES_RECEIVED, default 100]
case_() {
  local log=$dir/$1.log
  cat >"$log" <<LOG
ftmpi counters: engine rank=0 frames_received=${5:-100} dropped_malformed=2 dropped_bad_payload=0 retransmits=3
ftmpi counters: engine rank=1 frames_received=$2 dropped_malformed=0 dropped_bad_payload=$3 retransmits=0
ftmpi counters: faults rank=0 rail=1 name='fault(a)' frames_seen=1000 dropped=0 corrupted=10 duplicated=0 blackholed=0
ftmpi counters: faults rank=1 rail=1 name='fault(b)' frames_seen=100 dropped=0 corrupted=2 duplicated=0 blackholed=0
LOG
  expect "$1" "$log" corruption "$4"
}
case_ every-frame-read-all-detected 1000 10 pass
case_ every-frame-read-one-missed 1000 9 fail      # a corrupt frame arrived and was not caught
case_ five-unread-three-missed 995 7 pass          # at most five corrupt frames can have been lost
case_ one-unread-three-missed 999 7 fail
case_ a-good-frame-refused 1000 11 fail            # more detections than corruptions
case_ more-read-than-sent 1200 9 fail              # other paths: no allowance
case_ loss-the-other-way 1000 9 fail 95            # rank 1 read all of rank 0's frames: no excuse

# placed: received-into-place counts on the "udp" lines (summed over ranks and rails).
placed_case() {
  local log=$dir/placed-$1.log
  cat >"$log" <<LOG
ftmpi counters: engine rank=0 frames_received=10 dropped_malformed=0 dropped_bad_payload=0 retransmits=0
ftmpi counters: udp rank=0 rail=0 name='udp lo 127.0.0.1' long_frames_received=5 frames_placed=0 placement_declined=0
ftmpi counters: udp rank=1 rail=0 name='udp lo 127.0.0.1' long_frames_received=5 frames_placed=$1 placement_declined=0
LOG
  expect "placed-$1" "$log" placed "$2"
}
placed_case 0 fail
placed_case 5 pass
[ "$failures" -eq 0 ] && echo "check_counters_test: all cases behave"
exit $((failures != 0))
