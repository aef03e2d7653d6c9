#!/usr/bin/env bash
# ftinject_test.sh CASE FTRUN FTINJECT BULK_TRANSFER : ftinject against real jobs started by ftrun.
#
#   live          two ranks over two UDP loopback rails move a checked transfer (bulk_transfer -u): a
#                 malformed SPEC (exit 2) and an unknown rail (exit 4) change nothing; drop=0.05 on rail 1
#                 is active on both ranks and frames are dropped and resent; corrupt=0.02 on rail 0 for 1s
#                 is detected and ends by itself; clear removes every fault and nothing more is injected
#                 while 32 MB move; every byte arrives intact; the ended job gives exit 3
#   shm-refused   two ranks on one host (shared memory, reliability not forced): corruption is refused
#                 (exit 5, saying why) and nothing is injected; with engine.reliability=force it is
#                 injected, detected and repaired
#   drill-pass    a drill (corruption on rail 0, a blackhole on rail 1, a disable of rail 1) over a checked
#                 transfer: exit 0, every expectation holds, and the verdict's counts are the ranks' own
#                 (their engine.report counters at MPI_Finalize); its timeline prints and its SVG renders
#                 with rsvg-convert
#   drill-attach  a drill on a job already running (--job): its steps (a drop fault left in place, a
#                 disable for 500ms) run, its verdict passes, and it leaves no fault behind; the job then
#                 ends intact
#   drill-fail    a drill expecting no retransmission while dropping 5%: exit 1, that expectation FAILs
#   drill-ended   a drill whose job ends before its last step: exit 3, saying so
#   drill-rail    a malformed drill file: exit 2, before anything is launched; a drill naming a rail the
#                 job does not have: exit 4
#
# Every case has its own runtime directory (XDG_RUNTIME_DIR). Waits are for events, each bounded so
# that a failure says what did not happen.
set -uo pipefail
case_name=${1:?usage: ftinject_test.sh CASE FTRUN FTINJECT BULK_TRANSFER}
ftrun=$2
fti=$3
bulk=$4
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
job_pid=
cleanup() {
  touch "$work/stop"
  [ -z "$job_pid" ] || { kill "$job_pid" 2>/dev/null; wait "$job_pid" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=test_lib.sh
. "$(dirname "$0")/test_lib.sh"

# expect_exit STATUS COMMAND...: runs it (output in $out) and requires its exit status.
expect_exit() {
  local want=$1
  shift
  out=$("$@" 2>&1)
  local got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, not $want: $out"
}

udp_rails=(--param path.kinds=udp --param path.rails=127.0.0.1,127.0.0.2)
start_job() {
  rm -f "$work/stop"  # left by the case's previous job
  "$ftrun" "$@" > "$work/job.log" 2>&1 &
  job_pid=$!
  wait_for '[ -n "$(job_id)" ]' || fail "the job never recorded itself"
  id=$(job_id)
}
job_id() { for f in "$XDG_RUNTIME_DIR"/ftmpi/*.json; do [ -f "$f" ] && basename "$f" .json; done | head -1; }
status_json() { "$fti" "$id" status --json; }
# The number of fault specs active on rail $1 over every rank.
specs_on() { status_json | jq "[.ranks[].reply.rails[] | select(.index == $1) | .faults[]] | length"; }
# A counter summed over every rank and rail: injected.dropped, detected, retransmits...
summed() { status_json | jq "[.ranks[].reply.rails[] | .$1] | add // 0"; }
end_job() {
  touch "$work/stop"
  wait "$job_pid"
  local status=$?
  job_pid=
  [ "$status" -eq 0 ] || fail "the job exited $status"
  grep -q "every byte intact" "$work/job.log" || fail "the transfer was not intact"
}

case $case_name in
live)
  start_job -n 2 --timeout 170 "${udp_rails[@]}" "$bulk" -m 256 -s 262144 -u "$work/stop"
  wait_for '[ "$(status_json | jq ".ranks | length")" = 2 ]' || fail "the ranks never answered"
  expect_exit 2 "$fti" "$id" drop=2
  echo "$out" | grep -q "probability" || fail "a malformed SPEC does not say why: $out"
  expect_exit 4 "$fti" "$id" drop=0.1 --rail eth9
  echo "$out" | grep -q "no rail 'eth9'" || fail "an unknown rail does not say why: $out"
  [ "$(specs_on 0)" -eq 0 ] && [ "$(specs_on 1)" -eq 0 ] || fail "a refused injection left a fault: $(status_json)"

  expect_exit 0 "$fti" "$id" drop=0.05 --rail 1
  echo "$out"
  [ "$(specs_on 1)" -eq 2 ] || fail "drop=0.05 is not active on rail 1 of both ranks: $(status_json)"
  wait_for '[ "$(summed injected.dropped)" -gt 0 ] && [ "$(summed retransmits)" -gt 0 ]' 120 ||
    fail "nothing was dropped and resent: $(status_json)"

  expect_exit 0 "$fti" "$id" corrupt=0.02,seed=9 --rail 0 --for 1s
  wait_for '[ "$(summed detected)" -gt 0 ]' 120 || fail "no corruption was detected: $(status_json)"
  wait_for '[ "$(specs_on 0)" -eq 0 ]' 120 || fail "corrupt for 1s did not end by itself: $(status_json)"
  "$fti" "$id" status

  expect_exit 0 "$fti" "$id" clear
  [ "$(specs_on 1)" -eq 0 ] || fail "clear left a fault: $(status_json)"
  dropped=$(summed injected.dropped)
  corrupted=$(summed injected.corrupted)
  from=$(grep -c '^progress' "$work/job.log")
  # bulk_transfer prints a line every 5% of 256 MB (12.8 MB): three more lines is more than 32 MB moved.
  wait_for '[ "$(grep -c "^progress" "$work/job.log")" -ge $((from + 3)) ] || grep -q "^progress 100%" "$work/job.log"' 120 ||
    fail "the transfer stalled after clear"
  [ "$(summed injected.dropped)" -eq "$dropped" ] && [ "$(summed injected.corrupted)" -eq "$corrupted" ] ||
    fail "faults were injected after clear: $(status_json)"
  end_job
  expect_exit 3 "$fti" "$id" status
  expect_exit 3 "$fti" "$id" drop=0.1
  echo "ftinject_test: live injection, status and clear behave" ;;

shm-refused)
  start_job -n 2 --timeout 170 "$bulk" -m 64 -s 262144 -u "$work/stop"
  wait_for '[ "$(status_json | jq ".ranks | length")" = 2 ]' || fail "the ranks never answered"
  expect_exit 5 "$fti" "$id" corrupt=0.01
  echo "$out" | grep -q "shared memory" || fail "the refusal does not say why: $out"
  expect_exit 5 "$fti" "$id" drop=0.01 --rail 0
  [ "$(specs_on 0)" -eq 0 ] || fail "a refused injection left a fault"
  [ "$(summed injected.corrupted)" -eq 0 ] || fail "something was injected"
  end_job
  start_job -n 2 --timeout 170 --param engine.reliability=force "$bulk" -m 64 -s 262144 -u "$work/stop"
  wait_for '[ "$(status_json | jq ".ranks | length")" = 2 ]' || fail "the ranks never answered"
  expect_exit 0 "$fti" "$id" corrupt=0.02 --rail 0
  wait_for '[ "$(summed detected)" -gt 0 ]' 120 || fail "corruption on forced-reliable shared memory was not detected"
  end_job
  echo "ftinject_test: corruption refused on shared memory, taken and repaired with reliability forced" ;;

drill-pass)
  cat > "$work/pass.drill" <<'EOF'
# corruption on rail 0, then rail 1 lost twice: by a blackhole, and by the operator
at 200ms inject corrupt=0.01,seed=3 rail=0 for=1500ms
at 2s    inject blackhole rail=1 for=1s
at 3500ms disable rail=1 for=500ms
expect exit 0
expect corruption_detected
expect corrupt_bytes 0
expect stall < 5s
expect failback < 5s
expect retransmits > 0
expect injected_corrupted > 0
expect peers_lost = 0
EOF
  "$fti" drill "$work/pass.drill" --json --timeline "$work/t.zst" --svg "$work/t.svg" --done-file "$work/stop" -- \
    "$ftrun" -n 2 --timeout 170 "${udp_rails[@]}" --param engine.rail.probe_max=100ms --param engine.report=true \
    "$bulk" -m 64 -s 262144 -u "$work/stop" > "$work/verdict.json" 2> "$work/drill.log"
  status=$?
  cat "$work/verdict.json"
  [ "$status" -eq 0 ] || fail "the drill exited $status"
  [ "$(jq -r .passed "$work/verdict.json")" = true ] || fail "the drill did not pass"
  [ "$(jq '.verdict | length' "$work/verdict.json")" -eq 8 ] || fail "not every expectation was judged"
  # The verdict counts what the ranks counted.
  "$here/verdict_counts.sh" "$work/verdict.json" "$work/drill.log" || fail "the verdict's counts are not the ranks'"
  "$fti" timeline "$work/t.zst" > "$work/timeline.txt" || fail "ftinject timeline exited $?"
  grep -q "step: inject blackhole rail=1 for=1s" "$work/timeline.txt" || fail "the timeline lacks the blackhole step"
  grep -q "rail 1 .* down\|rail 1 .* disabled" "$work/timeline.txt" || fail "the timeline lacks rail 1 leaving service"
  "$fti" timeline "$work/t.zst" --svg "$work/again.svg" || fail "ftinject timeline --svg exited $?"
  command -v rsvg-convert >/dev/null || fail "rsvg-convert is missing (scripts/install-deps.sh installs librsvg2-bin)"
  for svg in t again; do
    rsvg-convert -o "$work/$svg.png" "$work/$svg.svg" || fail "rsvg-convert cannot render $svg.svg"
    [ "$(head -c 4 "$work/$svg.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$svg.png is not a PNG"
  done
  echo "ftinject_test: the drill passed, its counts are the ranks', its timeline prints and renders" ;;

drill-attach)
  start_job -n 2 --timeout 170 "${udp_rails[@]}" --param engine.rail.probe_max=100ms "$bulk" -m 64 -s 262144 -u "$work/stop"
  wait_for '[ "$(status_json | jq ".ranks | length")" = 2 ]' || fail "the ranks never answered"
  printf '%s\n' 'at 0s    inject drop=0.02,seed=5 rail=0' 'at 16MB  disable rail=1 for=500ms' \
    'expect injected_dropped > 0' 'expect failback < 5s' 'expect peers_lost = 0' > "$work/attach.drill"
  "$fti" drill "$work/attach.drill" --job "$id" > "$work/verdict.txt" 2>&1
  status=$?
  cat "$work/verdict.txt"
  [ "$status" -eq 0 ] || fail "the drill on a running job exited $status"
  [ "$(specs_on 0)" -eq 0 ] || fail "the drill left its fault in place: $(status_json)"
  end_job
  echo "ftinject_test: a drill on a running job passed and left no fault behind" ;;

drill-fail)
  cat > "$work/fail.drill" <<'EOF'
at 0s inject drop=0.05,seed=4 for=1s
expect exit 0
expect retransmits = 0
EOF
  "$fti" drill "$work/fail.drill" --done-file "$work/stop" -- "$ftrun" -n 2 --timeout 170 "${udp_rails[@]}" \
    "$bulk" -m 16 -s 262144 -u "$work/stop" > "$work/verdict.txt" 2>&1
  status=$?
  cat "$work/verdict.txt"
  [ "$status" -eq 1 ] || fail "a drill whose expectation is false exited $status, not 1"
  grep -q "^retransmits = 0 .*FAIL" "$work/verdict.txt" || fail "the verdict does not show the false expectation failing"
  grep -q "^exit 0 .*pass" "$work/verdict.txt" || fail "the verdict does not show the program's exit"
  echo "ftinject_test: a false expectation fails the drill" ;;

drill-ended)
  # The first step lets the transfer end (bulk_transfer -u); the second never comes.
  printf '%s\n' "at 0s run touch $work/stop" 'at 10GB inject drop=0.1' 'expect exit 0' > "$work/ended.drill"
  "$fti" drill "$work/ended.drill" -- "$ftrun" -n 2 --timeout 170 "${udp_rails[@]}" "$bulk" -m 16 -s 262144 \
    -u "$work/stop" > "$work/ended.log" 2>&1
  status=$?
  cat "$work/ended.log"
  [ "$status" -eq 3 ] || fail "a drill whose job ended before its last step exited $status, not 3"
  grep -q "the job ended before step 2 of 2" "$work/ended.log" || fail "it does not say the job ended"
  echo "ftinject_test: a job that ends mid-drill is said" ;;

drill-rail)
  printf 'at 0s inject drop=2\n' > "$work/bad.drill"
  expect_exit 2 "$fti" drill "$work/bad.drill" -- "$ftrun" -n 2 "$bulk" -m 4096
  echo "$out" | grep -q "bad.drill line 1: .*probability" || fail "a malformed drill file does not say where: $out"
  [ ! -e "$XDG_RUNTIME_DIR/ftmpi" ] || fail "a malformed drill file launched a job"
  printf 'at 0s inject drop=0.1 rail=eth9\nexpect exit 0\n' > "$work/rail.drill"
  # The transfer repeats until the drill ends it (-u): a fixed amount could end before every rank answers
  # the drill on a fast machine, and the drill would then report the job gone (3) instead of the rail.
  # --done-file ends it too should the drill ever run its step, so that such a failure is quick.
  "$fti" drill "$work/rail.drill" --done-file "$work/stop" -- "$ftrun" -n 2 --timeout 170 "${udp_rails[@]}" \
    "$bulk" -m 16 -s 262144 -u "$work/stop" > "$work/rail.log" 2>&1
  status=$?
  cat "$work/rail.log"
  [ "$status" -eq 4 ] || fail "a drill naming an unknown rail exited $status, not 4"
  grep -q "no rail 'eth9'" "$work/rail.log" || fail "it does not name the rail"
  echo "ftinject_test: unknown rails and malformed drills are refused" ;;

*) echo "ftinject_test.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
