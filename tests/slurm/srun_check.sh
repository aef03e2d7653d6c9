#!/usr/bin/env bash
# One check of ranks started by srun, run inside slurm_harness.sh run (SLURM_CONF, HARNESS_SLURM_DIR set).
#
#   srun_check.sh MODE RANKS PMIX_BUILT PROGRAM [ARGS...]
#
#   pass       srun -N NODES -n RANKS --mpi=pmix PROGRAM exits 0
#   no-pmix    srun -n RANKS --mpi=none PROGRAM: every rank says to launch with srun --mpi=pmix or
#              ftrun, and exits non-zero
#   scancel    PROGRAM (tests/slurm/hold.c) runs under --mpi=pmix until every rank holds; scancel ends it
#   kill-rank  the same, but rank 1 is killed (SIGKILL); srun ends the others (--kill-on-bad-exit)
#   control    PROGRAM (hold.c) runs under --mpi=pmix until every rank holds; with no ftrun, each rank
#              serves its own control socket: ftpath list (FTPATH) shows the job once with RANKS ranks,
#              ftpath show and ftinject status (FTINJECT) get an answer from every rank; then scancel,
#              after which ftpath finds no such job (the ranks' records are stale and removed)
#   abort      PROGRAM ARGS is tests/mpi/fatal.c's abort: rank 1 calls MPI_Abort with 7 and says so
#              on stderr (the step may be killed before srun learns the task's exit code), srun exits
#              non-zero
#   sbatch-ftrun  sbatch -N NODES -n RANKS of a script that runs `ftrun PROGRAM` (FTRUN) inside
#              the allocation (no -n: ftrun takes the allocation's tasks), then `ftrun sh -c` printing each
#              rank's host: the job ends COMPLETED with exit code 0, its output file has "hello from rank R
#              of RANKS" once for each rank (PROGRAM is tests/mpi/hello.c), and the ranks ran on NODES
#              distinct hosts
#   salloc-ftrun  salloc -n RANKS ftrun PROGRAM (hello.c) prints exactly RANKS hello lines, each rank once;
#              then salloc -n RANKS ftrun -n RANKS+1 fails (status 2) saying the ranks do not fit in the
#              allocation's RANKS slots and naming --oversubscribe
#   rail-failover  two nodes: srun -N 2 -n 2 --mpi=pmix of PROGRAM (tests/fault/bulk_transfer.c, every
#              byte checked, going on until told) over rails r1 and r2 (FTMPI_PATH_RAILS from the test);
#              once the receiver reports 20% of the transfer, rail r1 of ftB goes down (its link, as the
#              ftrun drill fault_netns_link-down does). After a rank logs the rail down and ftpath
#              (FTPATH, on ftA) shows it down on rank 0 too, ftpath reads rank 0's per-rail counters; once
#              rank 0 has sent 32 MB more, r1 must still be down and have carried probes at most (under
#              64 KiB), r2 the rest; then the transfer ends, srun exits 0 with every byte intact, and the
#              counters show the failover (tests/fault/check_counters.sh)
#
# Every mode then checks that no process of the job is left and nothing new in /dev/shm. PMIX_BUILT is
# "yes" when ftmpi was built with libpmix; the PMIx modes skip (77) without it, as without srun's plugin.
# NODES is the harness's (SLURM_HARNESS_NODES, 1 or 2): with 2, srun runs inside the simulated host ftA
# and the ranks are spread over ftA and ftB.
set -euo pipefail

mode=$1
ranks=$2
pmix_built=$3
program=$4
shift 4
args=("$@")
: "${HARNESS_SLURM_DIR:?run me inside slurm_harness.sh run}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ftmpi-srun-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/out "$work"/err; do
    [ -s "$f" ] || continue
    echo "--- $(basename "$f"):" >&2
    tail -n 30 "$f" >&2
  done
  exit 1
}

# wait_until and marked_pids.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/slurm_harness.sh
. "$here/slurm_harness.sh"

if [ "$mode" != no-pmix ] && [ "$mode" != sbatch-ftrun ] && [ "$mode" != salloc-ftrun ]; then
  if [ "$pmix_built" != yes ]; then
    echo "SKIP: ftmpi was built without PMIx (install libpmix-dev and reconfigure)"
    exit 77
  fi
  if ! on_head srun --mpi=list 2>&1 | grep -qw pmix; then
    echo "SKIP: this Slurm has no pmix MPI plugin (srun --mpi=list)"
    exit 77
  fi
fi

# srun passes its environment to the ranks: a sanitized build must not count libpmix's own leaks.
export LSAN_OPTIONS="suppressions=$here/lsan-pmix.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# The entries of /dev/shm, of each simulated host with two nodes (each has its own), by name only.
shm_entries() {
  local h
  if [ "$nodes" = 2 ]; then
    for h in "${sim_hosts[@]}"; do "$simhosts" exec "$h" ls -1 /dev/shm | sed "s|^|$h:|"; done
  else
    # shellcheck disable=SC2012 # names only
    ls -1 /dev/shm
  fi | sort
}
shm_entries >"$work/shm-before"

# The job's processes: the step daemons and tasks of this Slurm (slurm_harness.sh's mark in their
# environment; a task also has SLURM_JOB_ID, which this script and the daemons have not).
job_processes() {
  local pid
  for pid in $(marked_pids "$HARNESS_SLURM_DIR"); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || grep -qszE '^SLURM_JOB_ID=' "/proc/$pid/environ"; then
      echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80)"
    fi
  done
}

# Entries of /dev/shm that were not there before the job.
new_shm() { shm_entries | comm -13 "$work/shm-before" -; }

# Nothing of the job may remain: its processes end within KillWait, and a /dev/shm entry of another
# test on this machine comes and goes, where one the job left stays.
# shellcheck disable=SC2016 # wait_until evaluates its condition at each try
check_nothing_left() {
  if ! wait_until '[ -z "$(job_processes)" ]' 15; then
    fail "processes of the job are left: $(job_processes | tr '\n' ';')"
  fi
  if ! wait_until '[ -z "$(new_shm)" ]' 10; then
    fail "the job left in /dev/shm: $(new_shm | tr '\n' ' ')"
  fi
}

# Starts PROGRAM under srun in the background and waits until every rank holds (hold.c).
start_holding_job() {
  on_head srun -N "$nodes" -n "$ranks" --mpi=pmix --kill-on-bad-exit=1 "$program" "${args[@]}" >"$work/out" 2>"$work/err" &
  srun_pid=$!
  if ! wait_until "[ \$(grep -c ' holding\$' '$work/out') -eq $ranks ]" 90; then
    kill "$srun_pid" 2>/dev/null || true
    fail "the ranks did not all start within 90 s"
  fi
}

# Waits (bounded) for srun to end and sets srun_status.
wait_for_srun() {
  if ! wait_until "! kill -0 $srun_pid 2>/dev/null" 30; then
    kill "$srun_pid" 2>/dev/null || true
    fail "srun did not end within 30 s"
  fi
  srun_status=0
  wait "$srun_pid" || srun_status=$?
}

case "$mode" in
  pass)
    status=0
    timeout 100 "${head_prefix[@]}" srun -N "$nodes" -n "$ranks" --mpi=pmix --kill-on-bad-exit=1 "$program" "${args[@]}" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 0 ] || fail "srun --mpi=pmix of $(basename "$program") exited $status"
    cat "$work/out"
    ;;
  no-pmix)
    status=0
    timeout 60 "${head_prefix[@]}" srun -N "$nodes" -n "$ranks" --mpi=none "$program" "${args[@]}" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -ne 0 ] || fail "srun --mpi=none exited 0: MPI_Init should have refused"
    said=$(grep -c "launch it with 'srun --mpi=pmix'.*or with ftrun" "$work/err" || true)
    [ "$said" -eq "$ranks" ] || fail "$said of $ranks ranks said how to launch"
    grep -m1 "srun --mpi=pmix" "$work/err"
    echo "srun --mpi=none exited $status"
    ;;
  scancel)
    start_holding_job
    job=$(on_head squeue -h -o %i | head -n1)
    [ -n "$job" ] || fail "squeue lists no job"
    on_head scancel "$job"
    wait_for_srun
    [ "$srun_status" -ne 0 ] || fail "srun exited 0 after scancel"
    echo "scancel $job: srun exited $srun_status"
    ;;
  kill-rank)
    start_holding_job
    victim=$(awk '$1 == "rank" && $2 == 1 {print $6}' "$work/out")
    [ -n "$victim" ] || fail "rank 1 did not say its pid"
    kill -KILL "$victim"
    wait_for_srun
    [ "$srun_status" -ne 0 ] || fail "srun exited 0 after rank 1 was killed"
    echo "rank 1 (pid $victim) killed: srun exited $srun_status"
    ;;
  control)
    start_holding_job
    # Other jobs of this user (other tests) may run meanwhile: this job is the one running PROGRAM.
    job=$("$FTPATH" list --json | jq -r --arg p "$program" '[.jobs[] | select(.command | startswith($p))] | if length == 1 then .[0].id else "" end')
    [ -n "$job" ] || fail "ftpath list does not show the job once: $("$FTPATH" list)"
    listed=$("$FTPATH" list --json | jq --arg j "$job" '.jobs[] | select(.id == $j) | .ranks')
    [ "$listed" -eq "$ranks" ] || fail "ftpath list says $listed ranks, not $ranks"
    answered=$("$FTPATH" show "$job" --json | jq '[.ranks[].rank] | length')
    [ "$answered" -eq "$ranks" ] || fail "ftpath show: $answered of $ranks ranks answered"
    status_ranks=$("$FTINJECT" "$job" status --json | jq '.ranks | length')
    [ "$status_ranks" -eq "$ranks" ] || fail "ftinject status: $status_ranks of $ranks ranks answered"
    echo "ftpath show and ftinject status: every one of $ranks ranks of job $job answered"
    on_head scancel "$(on_head squeue -h -o %i | head -n1)"
    wait_for_srun
    if "$FTPATH" list --json | jq -e --arg j "$job" '.jobs[] | select(.id == $j)' >/dev/null; then
      fail "ftpath still lists job $job after scancel"
    fi
    ;;
  abort)
    status=0
    timeout 60 "${head_prefix[@]}" srun -N "$nodes" -n "$ranks" --mpi=pmix --kill-on-bad-exit=1 "$program" "${args[@]}" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -ne 0 ] || fail "srun exited 0 although rank 1 called MPI_Abort"
    # Slurm reports task 1's exit code 7 only when the task exits before the PMIx abort kills the step
    # (then every task is "Killed"): the rank's own line names it either way.
    grep -q "ftmpi: rank 1 called MPI_Abort with error code 7: ending the job" "$work/err" ||
      fail "rank 1 did not say it called MPI_Abort with error code 7"
    echo "MPI_Abort(7) on rank 1: srun exited $status"
    ;;
  sbatch-ftrun)
    : "${FTRUN:?sbatch-ftrun needs FTRUN}"
    # shellcheck disable=SC2016 # expanded by the ranks' shells
    printf '#!/bin/sh\n%q %q || exit\nexec %q sh -c %q\n' "$FTRUN" "$program" "$FTRUN" \
      'echo "rank $FTMPI_RANK ran on $(hostname)"' >"$work/job.sh"
    chmod +x "$work/job.sh"
    job=$(on_head sbatch --parsable -N "$nodes" -n "$ranks" -o "$work/out" -e "$work/err" "$work/job.sh") ||
      fail "sbatch did not submit the job"
    # The job's state and exit code, once it has ended (sbatch --wait polls only every few seconds).
    job_end() { on_head scontrol show job "$job" | grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' | paste -sd ' '; }
    wait_until "! job_end | grep -qE 'JobState=(PENDING|CONFIGURING|RUNNING|COMPLETING)'" 120 ||
      fail "batch job $job did not end within 120 s: $(job_end)"
    state=$(job_end)
    [ "$state" = "JobState=COMPLETED ExitCode=0:0" ] || fail "batch job $job ended as: $state"
    for r in $(seq 0 $((ranks - 1))); do
      n=$(grep -c "^hello from rank $r of $ranks\$" "$work/out" || true)
      [ "$n" -eq 1 ] || fail "rank $r of $ranks said hello $n times in the job's output"
    done
    [ "$(grep -c '^hello from rank' "$work/out")" -eq "$ranks" ] || fail "more hello lines than $ranks ranks"
    [ "$(grep -c '^rank [0-9]* ran on ' "$work/out")" -eq "$ranks" ] || fail "not $ranks ranks said their host"
    hosts=$(awk '/^rank [0-9]+ ran on / { print $5 }' "$work/out" | sort -u | paste -sd ' ')
    [ "$(wc -w <<<"$hosts")" -eq "$nodes" ] || fail "the ranks ran on $hosts, not on $nodes hosts"
    echo "sbatch job $job ($state): ftrun ran $ranks ranks of the allocation on $hosts"
    ;;
  salloc-ftrun)
    : "${FTRUN:?salloc-ftrun needs FTRUN}"
    status=0
    timeout 100 "${head_prefix[@]}" salloc -n "$ranks" "$FTRUN" "$program" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 0 ] || fail "salloc -n $ranks ftrun exited $status"
    [ "$(grep -c '^hello from rank' "$work/out")" -eq "$ranks" ] || fail "not $ranks hello lines"
    for r in $(seq 0 $((ranks - 1))); do
      grep -qx "hello from rank $r of $ranks" "$work/out" || fail "rank $r of $ranks did not say hello"
    done
    echo "salloc -n $ranks ftrun: $ranks ranks"
    status=0
    timeout 100 "${head_prefix[@]}" salloc -n "$ranks" "$FTRUN" -n $((ranks + 1)) "$program" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 2 ] || fail "salloc -n $ranks ftrun -n $((ranks + 1)) exited $status, not 2"
    grep -q "ranks do not fit in the $ranks slots.*--oversubscribe" "$work/err" ||
      fail "ftrun did not say that $((ranks + 1)) ranks do not fit in the allocation"
    grep -m1 "do not fit" "$work/err"
    ;;
  rail-failover)
    : "${FTPATH:?rail-failover needs FTPATH}"
    [ "$nodes" = 2 ] || fail "rail-failover needs two nodes (SLURM_HARNESS_NODES=2)"
    # This job's control sockets only (ftpath lists the runtime directory's jobs).
    export XDG_RUNTIME_DIR=$work/run FTMPI_ENGINE_REPORT=true
    mkdir -m 0700 "$XDG_RUNTIME_DIR"
    stop=$work/stop
    on_head srun -N 2 -n 2 --mpi=pmix --kill-on-bad-exit=1 "$program" "${args[@]}" -u "$stop" >"$work/out" 2>"$work/err" &
    srun_pid=$!
    stop_job() { touch "$stop"; wait_until "! kill -0 $srun_pid 2>/dev/null" 60 || kill "$srun_pid" 2>/dev/null || true; }
    job_fail() { stop_job; fail "$@"; }
    wait_until "grep -q '^progress 20%' '$work/out' || ! kill -0 $srun_pid 2>/dev/null" 120 ||
      job_fail "the transfer did not reach 20% within 120 s"
    kill -0 "$srun_pid" 2>/dev/null || job_fail "the job ended before 20% of the transfer"
    "$simhosts" link ftB r1 down
    echo "rail r1 of ftB down at $(grep '^progress' "$work/out" | tail -1)"
    wait_until "grep -q 'rail .*r1.* is down' '$work/err'" 120 || job_fail "no rank logged rail r1 down within 120 s"
    grep -m1 'is down' "$work/err"
    # Rank 0 (on ftA) by its control socket: r1's and r2's bytes sent, and its total.
    rank0() {
      "$simhosts" exec ftA env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$FTPATH" show --timeout 10 --json |
        jq -e '.ranks[] | select(.rank == 0)'
    }
    # r1's bytes sent, r2's, rank 0's total, and r1's state.
    counts() {
      rank0 | jq -r '[([.rails[] | select(.name | contains(" r1 ")) | .bytes_sent] | add),
                      ([.rails[] | select(.name | contains(" r2 ")) | .bytes_sent] | add), .totals.bytes_sent,
                      ([.rails[] | select(.name | contains(" r1 ")) | .state] | unique | join(","))] | @tsv'
    }
    rank0_sent() { rank0 | jq .totals.bytes_sent || echo 0; }
    r1_state() { counts | cut -f4; }
    # From when rank 0 itself has r1 down (the log line may be rank 1's): what it sends now goes on r2.
    # shellcheck disable=SC2016 # evaluated by wait_until
    wait_until '[ "$(r1_state)" = down ]' 120 || job_fail "rank 0 did not take r1 down within 120 s ($(r1_state))"
    read -r r1_from r2_from total_from _ < <(counts) || job_fail "ftpath show did not answer for rank 0"
    # shellcheck disable=SC2016 # evaluated by wait_until
    wait_until '[ "$(rank0_sent)" -gt '$((total_from + 33554432))' ]' 120 ||
      job_fail "rank 0 did not send 32 MB more within 120 s after the failure"
    read -r r1_to r2_to total_to r1_state < <(counts) || job_fail "ftpath show did not answer for rank 0"
    stop_job
    sent=$((total_to - total_from)) on_r1=$((r1_to - r1_from)) on_r2=$((r2_to - r2_from))
    echo "after the failure rank 0 sent $sent bytes: $on_r2 on r2, $on_r1 on r1 (r1 $r1_state)"
    # While down, r1 may carry probes only (a few small frames); the rest went over r2.
    [ "$r1_state" = down ] || fail "r1 is $r1_state after its link went down, not down"
    [ "$on_r1" -lt 65536 ] || fail "r1 carried $on_r1 bytes while down"
    [ "$on_r2" -ge 33554432 ] || fail "r2 carried only $on_r2 bytes of the 32 MB sent after the failure"
    srun_status=0
    wait "$srun_pid" || srun_status=$?
    [ "$srun_status" -eq 0 ] || fail "srun exited $srun_status"
    grep -q "every byte intact" "$work/out" || fail "the transfer did not report every byte intact"
    grep "bulk transfer:" "$work/out"
    cat "$work/out" "$work/err" >"$work/log"
    "$here/../fault/check_counters.sh" "$work/log" failover || fail "the counters do not show the failover"
    ;;
  *)
    echo "unknown mode '$mode' (pass, no-pmix, scancel, kill-rank, control, abort, sbatch-ftrun, salloc-ftrun, rail-failover)" >&2
    exit 2
    ;;
esac
check_nothing_left
echo "nothing left: no process of the job, nothing new in /dev/shm"
