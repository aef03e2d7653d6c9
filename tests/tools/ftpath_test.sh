#!/usr/bin/env bash
# ftpath_test.sh CASE FTRUN FTPATH BULK_TRANSFER BUSY_RANK : ftpath against real jobs started by ftrun.
#
#   disable-enable  two ranks over two UDP loopback rails move a checked transfer (bulk_transfer -u);
#                   `ftpath disable` rail 1: both ranks say so, its bytes stop growing while the transfer
#                   moves 64 MB more; disabling rail 0 too is refused (exit 4, the last working rail);
#                   `ftpath enable` rail 1: it comes back up and carries traffic again; every byte arrives
#                   intact; `ftpath show` on the ended job says so (exit 3)
#   disable-enable-verbs  the same with rail 0 UDP and rail 1 the verbs path (emulated device): `ftpath
#                   show` lists rails of both kinds, and the verbs rail is disabled and enabled by index
#   busy            rank 1 computes without MPI calls: `show --timeout 1` returns, names rank 1 as not
#                   answering (exit 5) and still shows rank 0
#   two-jobs        two jobs at once: list shows both, show without JOB asks for one (exit 3), each by id
#                   shows its own ranks
#   stale           a record whose ftrun is gone is removed by list (and its socket with it)
#   other-user      another uid cannot reach the job: not through the runtime directory (0700), and not
#                   even with the directory and socket opened up (ftrun checks the peer's uid) (root only)
#
# Every case has its own runtime directory (XDG_RUNTIME_DIR), so jobs of tests running beside it are not
# seen. Waits are for events (a line, a byte count, a state), each bounded so that a failure says what
# did not happen.
set -uo pipefail
case_name=${1:?usage: ftpath_test.sh CASE FTRUN FTPATH BULK_TRANSFER BUSY_RANK}
ftrun=$2
ftpath=$3
bulk=$4
busy=$5

work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
jobs_started=()
cleanup() {
  touch "$work/stop"
  for p in "${jobs_started[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=test_lib.sh
. "$(dirname "$0")/test_lib.sh"

# Starts a job in the background: start_job NAME ARGS... (its log is $work/NAME.log).
start_job() {
  local name=$1
  shift
  "$ftrun" "$@" > "$work/$name.log" 2>&1 &
  jobs_started+=($!)
  eval "${name}_pid=$!"
}

only_job_id() { "$ftpath" list --json | jq -r '.jobs[0].id // empty'; }

udp_rails=(--param path.kinds=udp --param path.rails=127.0.0.1,127.0.0.2)

case $case_name in
disable-enable | disable-enable-verbs)
  rails=("${udp_rails[@]}")
  rail_1=127.0.0.2  # how `ftpath enable` names rail 1
  if [ "$case_name" = disable-enable-verbs ]; then
    rails=(--paths udp,verbs --param path.rails=127.0.0.1 --param path.verbs.device=emulated)
    rail_1=1
  fi
  start_job job -n 2 --timeout 170 "${rails[@]}" "$bulk" -m 512 -s 262144 -u "$work/stop"
  wait_for '[ -n "$(only_job_id)" ]' || fail "the job never appeared in ftpath list"
  id=$(only_job_id)
  # Sum over both ranks of one rail's bytes sent, and rank 1's bytes received in all (the transfer's progress).
  rail_sent() { "$ftpath" show "$id" --json | jq "[.ranks[].rails[]? | select(.index == $1) | .bytes_sent] | add // 0"; }
  moved() { "$ftpath" show "$id" --json | jq '[.ranks[] | select(.rank == 1) | .totals.bytes_received] | add // 0'; }
  rail_states() { "$ftpath" show "$id" --json | jq -r "[.ranks[].rails[]? | select(.index == $1) | .state] | unique | join(\",\")"; }
  wait_for '[ "$(moved)" -gt 33554432 ]' || fail "the transfer did not start"
  [ "$(rail_sent 1)" -gt 0 ] || fail "rail 1 carried nothing before it was disabled (no striping?)"
  if [ "$case_name" = disable-enable-verbs ]; then
    names=$("$ftpath" show "$id" --json | jq -r '[.ranks[].rails[]? | .name] | unique | join(",")')
    case $names in *udp*verbs* | *verbs*udp*) ;; *) fail "ftpath show should list a UDP and a verbs rail: $names" ;; esac
    echo "ftpath_test: rails of both kinds: $names"
  fi

  # Every rank applies the disable in the progress round that takes the request, moving the rail's frames
  # off at once; ftpath returns once all confirmed. From then on the rail must carry nothing: traffic
  # left it by the confirmation (its time is printed, not asserted: tests are not timed).
  t0=$(date +%s%N)
  out=$("$ftpath" disable "$id" 1) || fail "ftpath disable exited $?: $out"
  echo "$out"
  echo "ftpath_test: the disable was confirmed by both ranks $(( ($(date +%s%N) - t0) / 1000000 )) ms after it was asked"
  [ "$(echo "$out" | grep -c 'is disabled')" -eq 2 ] || fail "both ranks should say rail 1 is disabled: $out"
  [ "$(rail_states 1)" = disabled ] || fail "rail 1 is $(rail_states 1), not disabled"
  frozen=$(rail_sent 1)
  from=$(moved)
  wait_for '[ "$(moved)" -gt $((from + 67108864)) ]' 120 || fail "the transfer stalled after the disable"
  [ "$(rail_sent 1)" -eq "$frozen" ] || fail "rail 1 sent $(( $(rail_sent 1) - frozen )) bytes while disabled"
  echo "ftpath_test: rail 1 sent nothing while 64 MB moved on rail 0"

  out=$("$ftpath" disable "$id" 0 2>&1)
  status=$?
  echo "$out"
  [ "$status" -eq 4 ] || fail "disabling the last working rail exited $status, not 4"
  echo "$out" | grep -q "last working rail" || fail "the refusal does not say why: $out"
  # Nothing changed (a loaded machine may make a rail suspect for a moment: still in service).
  case $(rail_states 0) in *disabled* | *down* | "") fail "rail 0 is $(rail_states 0) after a refused disable" ;; esac

  out=$("$ftpath" enable "$id" "$rail_1") || fail "ftpath enable exited $?: $out"
  echo "$out"
  wait_for '[ "$(rail_states 1)" = up ]' 60 || fail "rail 1 did not come back up (it is $(rail_states 1))"
  back=$(rail_sent 1)
  from=$(moved)
  wait_for '[ "$(moved)" -gt $((from + 67108864)) ]' 120 || fail "the transfer stalled after the enable"
  [ "$(rail_sent 1)" -gt "$back" ] || fail "rail 1 carries nothing since it was enabled"
  echo "ftpath_test: rail 1 carries traffic again"

  touch "$work/stop"
  wait "$job_pid"
  status=$?
  grep -v '^progress ' "$work/job.log"
  [ "$status" -eq 0 ] || fail "the job exited $status"
  grep -q "every byte intact" "$work/job.log" || fail "the transfer did not report every byte intact"
  out=$("$ftpath" show "$id" 2>&1)
  status=$?
  [ "$status" -eq 3 ] || fail "show on an ended job exited $status, not 3: $out"
  echo "ftpath_test: after the end: $out"
  ;;

busy)
  start_job job -n 2 --timeout 170 "$busy" "$work/stop"
  wait_for 'grep -q "rank 1 busy" "$work/job.log"' || fail "rank 1 never got busy"
  start=$SECONDS
  out=$("$ftpath" show --timeout 1 2>&1)
  status=$?
  echo "$out"
  [ "$status" -eq 5 ] || fail "show against a busy rank exited $status, not 5"
  echo "$out" | grep -q "rank 1 .*did not answer within 1 s" || fail "the busy rank is not named"
  echo "$out" | grep -qE '^0 ' || fail "rank 0's rails are not shown"
  [ $((SECONDS - start)) -lt 30 ] || fail "show took $((SECONDS - start)) s with a 1 s limit"
  json=$("$ftpath" show --timeout 1 --json 2>/dev/null)
  [ "$(echo "$json" | jq '.missing[0].rank')" = 1 ] || fail "JSON does not name rank 1 as missing: $json"
  touch "$work/stop"
  wait "$job_pid" || fail "the job failed"
  ;;

two-jobs)
  start_job joba -n 2 --timeout 170 "$busy" "$work/stop"
  start_job jobb -n 3 --timeout 170 "$busy" "$work/stop"
  wait_for '[ "$("$ftpath" list --json | jq ".jobs | length")" -eq 2 ]' || fail "list never showed both jobs"
  "$ftpath" list
  out=$("$ftpath" show 2>&1)
  status=$?
  [ "$status" -eq 3 ] || fail "show without JOB among two jobs exited $status, not 3"
  echo "$out" | grep -q "2 jobs are running" || fail "show without JOB does not say why: $out"
  for id in $("$ftpath" list --json | jq -r '.jobs[].id'); do
    want=$("$ftpath" list --json | jq ".jobs[] | select(.id == \"$id\") | .ranks")
    # Rank 1 is busy in both jobs: the others answer, rank 1 is missing.
    got=$("$ftpath" show "$id" --timeout 1 --json 2>/dev/null | jq '(.ranks | length) + (.missing | length)')
    [ "$got" = "$want" ] || fail "job $id has $want ranks, show found $got"
    prefix=${id:0:6}
    json=$("$ftpath" show "$prefix" --timeout 1 --json 2>/dev/null)  # exit 5: rank 1 is busy
    echo "$json" | jq -e ".job == \"$id\"" > /dev/null || fail "the prefix $prefix does not pick job $id: $json"
  done
  touch "$work/stop"
  wait "$joba_pid" || fail "job a failed"
  wait "$jobb_pid" || fail "job b failed"
  ;;

stale)
  sleep 0 &  # a pid that is surely gone once waited for
  gone=$!
  wait "$gone"
  echo "{\"id\":\"00000000deadbeef\",\"pid\":$gone,\"command\":\"x\",\"started\":1,\"ranks\":2,\"hosts\":[\"h\"],\"socket\":\"$XDG_RUNTIME_DIR/ftmpi/00000000deadbeef.sock\"}" \
    > "$XDG_RUNTIME_DIR/ftmpi.json.tmp"
  mkdir -m 0700 -p "$XDG_RUNTIME_DIR/ftmpi"
  mv "$XDG_RUNTIME_DIR/ftmpi.json.tmp" "$XDG_RUNTIME_DIR/ftmpi/00000000deadbeef.json"
  touch "$XDG_RUNTIME_DIR/ftmpi/00000000deadbeef.sock"
  out=$("$ftpath" list) || fail "list exited $?"
  echo "$out"
  echo "$out" | grep -q "1 stale record" || fail "list did not report the stale record"
  [ ! -e "$XDG_RUNTIME_DIR/ftmpi/00000000deadbeef.json" ] || fail "the stale record is still there"
  [ ! -e "$XDG_RUNTIME_DIR/ftmpi/00000000deadbeef.sock" ] || fail "the stale socket is still there"
  ;;

other-user)
  [ "$(id -u)" -eq 0 ] || { echo "ftpath_test: other-user needs root (setpriv)"; exit 77; }
  start_job job -n 2 --timeout 170 "$busy" "$work/stop"
  wait_for '[ -n "$(only_job_id)" ]' || fail "the job never appeared in ftpath list"
  id=$(only_job_id)
  chmod 0755 "$work"  # nobody may walk to the runtime directory, which stays 0700
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR")
  out=$("${as_nobody[@]}" "$ftpath" show "$id" 2>&1)
  status=$?
  echo "nobody, directory 0700: exit $status: $out"
  [ "$status" -ne 0 ] || fail "another user reached the job through a 0700 directory"
  # Open everything up: ftrun itself must refuse another uid.
  chmod 0755 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/ftmpi"
  chmod 0644 "$XDG_RUNTIME_DIR/ftmpi/$id.json"
  chmod 0666 "$XDG_RUNTIME_DIR/ftmpi/$id.sock"
  out=$("${as_nobody[@]}" "$ftpath" show "$id" 2>&1)
  status=$?
  echo "nobody, socket 0666: exit $status: $out"
  [ "$status" -ne 0 ] || fail "another user got an answer from the job's socket"
  echo "$out" | grep -q '"rails"' && fail "another user got statistics"
  grep -q "refused a connection from uid 65534" "$work/job.log" || fail "ftrun did not log the refusal"
  out=$("$ftpath" show "$id" --timeout 1 2>&1)
  [ $? -eq 5 ] || fail "the job's own user cannot use it any more: $out"
  touch "$work/stop"
  wait "$job_pid" || fail "the job failed"
  ;;

*) echo "ftpath_test: unknown case '$case_name'" >&2; exit 2 ;;
esac
echo "ftpath_test: $case_name passed"
