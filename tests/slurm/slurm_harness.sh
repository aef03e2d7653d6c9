#!/usr/bin/env bash
# A private single-node Slurm (munged, slurmctld, slurmd from Debian's packages) for ftmpi's tests,
# started without systemd and with every file in one state directory: nothing in /etc is written, and
# the daemons listen on free ports, so it runs beside a system Slurm or another harness.
#
#   slurm_harness.sh check              exit 0 if it can run here, else 77 and the reason (CTest: skip)
#   slurm_harness.sh up DIR             start the daemons with their state in DIR (made; must not exist),
#                                       wait until the node is idle; DIR/env then holds SLURM_CONF=...
#   slurm_harness.sh down DIR           cancel the jobs, end every process started under DIR's Slurm (the
#                                       daemons, and step daemons and tasks left behind), remove DIR
#   slurm_harness.sh run [--] CMD...    up in a fresh temporary DIR, run CMD with SLURM_CONF and
#                                       HARNESS_SLURM_DIR=DIR set, down on any exit; CMD's exit status
#   . slurm_harness.sh                  (sourced) defines wait_until and marked_pids, and runs nothing
#
# NCPUS (default 4) CPUs are declared for the node, more than this machine's cores if need be, so that
# `srun -n 4` runs on a 2-core machine.
#
# SLURM_HARNESS_NODES=2: two nodes, the simulated hosts ftA and ftB of tests/netns/simhosts.sh, which
# must be up (run under `simhosts.sh session`): slurmctld and one slurmd run inside ftA, the other slurmd
# inside ftB, each host with its own PMIx directory (a bind mount in its mount namespace: the step
# daemons of both would otherwise collide there). The controller is then reached only from inside ftA:
# on_head runs a command there (srun, squeue, scancel).
#
# Every process this Slurm starts has SLURM_CONF=DIR/slurm.conf in its environment: the daemons because
# they are started with it, the step daemons because slurmd passes its environment on, and the tasks
# because srun passes its own. `down` finds what is left by that mark, so it ends only this instance's.
set -euo pipefail

ncpus=${NCPUS:-4}
wait_seconds=${SLURM_HARNESS_WAIT:-30}
nodes=${SLURM_HARNESS_NODES:-1}
simhosts=$(cd "$(dirname "${BASH_SOURCE[0]}")/../netns" && pwd)/simhosts.sh
sim_hosts=(ftA ftB)
# What runs a command where the controller is reached: nothing, or entering ftA with two nodes.
head_prefix=()
if [ "$nodes" = 2 ]; then head_prefix=("$simhosts" exec "${sim_hosts[0]}"); fi

say() { echo "slurm_harness: $*" >&2; }

# Runs a command where the controller is reached.
on_head() { "${head_prefix[@]}" "$@"; }

# Whether this machine can run the harness; prints why not.
why_not() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "needs root (slurmd starts tasks as their user)"
    return
  fi
  local missing=()
  for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do [ -x "$p" ] || missing+=("$p"); done
  for c in srun sinfo squeue scancel munge ss; do command -v "$c" >/dev/null || missing+=("$c"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "missing ${missing[*]} (Debian: apt-get install slurmctld slurmd slurm-client munge iproute2)"
  elif [ "$nodes" = 2 ] && ! "$simhosts" exec "${sim_hosts[0]}" true 2>/dev/null; then
    echo "two nodes need the simulated hosts up (run under tests/netns/simhosts.sh session)"
  fi
}

# A TCP port no socket of this machine holds (listening or connected: a connection's local port also
# makes bind fail), below the kernel's ephemeral range so that no connection made meanwhile takes it;
# none of the ports given as arguments. Another process may still bind it before the daemon does: up
# then starts again on other ports.
free_port() {
  local port low=10000 high ephemeral_low
  ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  high=$((ephemeral_low > low + 1000 ? ephemeral_low : 60000))
  for _ in $(seq 1 100); do
    port=$((low + RANDOM % (high - low)))
    case " $* " in *" $port "*) continue ;; esac
    # A port is free only when ss answered and listed nothing on it.
    local sockets
    sockets=$(ss -Htan "sport = :$port") || continue
    if [ -z "$sockets" ]; then
      echo "$port"
      return
    fi
  done
  say "no free port found"
  return 1
}

# Polls `condition` (a command) every 0.1 s until it holds or $2 seconds have passed (by the clock: a
# condition that itself takes seconds, as sinfo without a controller does, does not stretch the wait).
wait_until() {
  local condition=$1 seconds=$2
  # SECONDS counts whole seconds: one more keeps the wait at least $2 long.
  local deadline=$((SECONDS + seconds + 1))
  while true; do
    if eval "$condition"; then return 0; fi
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Whether every pid given still runs.
all_alive() {
  local pid
  for pid in "$@"; do
    kill -0 "$pid" 2>/dev/null || return 1
  done
}

# Whether any of the pids given still runs.
any_alive() {
  local pid
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then return 0; fi
  done
  return 1
}

# Pids of the processes that carry this instance's mark (SLURM_CONF=$1/slurm.conf), this script's own
# excepted.
marked_pids() {
  local mark="SLURM_CONF=$1/slurm.conf"
  local pid
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ]; then continue; fi
    # Kernel threads and processes that just ended have no environment to read.
    if grep -qszxF "$mark" "$environ"; then echo "$pid"; fi
  done
}

# Starts one daemon in the foreground of a background job, its output in DIR/log, its pid in DIR/pids.
start_daemon() {
  local dir=$1 name=$2
  shift 2
  env SLURM_CONF="$dir/slurm.conf" "$@" </dev/null >"$dir/log/$name.out" 2>&1 &
  echo "$! $name" >>"$dir/pids"
}

# Starts the daemons in DIR, the controller on port $3 if given (else a free one); at the first failure
# returns 1, or 75 when a daemon found its port taken, and leaves what it started to its caller. Each
# step is checked by hand: up runs as `up DIR || ...`, where set -e and ERR traps do not act.
start_all() {
  local dir=$1 ctld_port_wanted=${2:-}
  # munged wants every directory above its socket searchable by all and the key its own, 0400.
  { mkdir -p "$dir"/{state,log,pmix,munge} && chmod 0755 "$dir" "$dir/munge"; } || return 1
  { head -c 1024 /dev/urandom >"$dir/munge.key" && chmod 0400 "$dir/munge.key"; } || return 1
  start_daemon "$dir" munged /usr/sbin/munged --foreground --socket="$dir/munge/munge.sock" \
    --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munged.seed"
  local munged_pid
  munged_pid=$(awk '$2 == "munged" { print $1 }' "$dir/pids")
  if ! wait_until "[ -S '$dir/munge/munge.sock' ] || ! all_alive $munged_pid" "$wait_seconds" ||
    [ ! -S "$dir/munge/munge.sock" ]; then
    say "munged did not start (it ended, or had no socket within ${wait_seconds}s)"
    return 1
  fi

  # The nodes, as name and address.
  local names=() addresses=()
  if [ "$nodes" = 2 ]; then
    names=("${sim_hosts[@]}")
    addresses=(10.77.0.1 10.77.0.2)  # their management link (simhosts.sh)
  else
    names=("$(hostname -s)") || return 1
    addresses=(127.0.0.1)
  fi
  local ctld_port=$ctld_port_wanted slurmd_port node_lines="" i
  { [ -n "$ctld_port" ] || ctld_port=$(free_port); } || return 1
  slurmd_port=$(free_port "$ctld_port") || return 1
  for i in "${!names[@]}"; do
    node_lines+="NodeName=${names[$i]} NodeAddr=${addresses[$i]} CPUs=$ncpus RealMemory=1000 State=UNKNOWN"$'\n'
  done
  local partition_nodes
  partition_nodes=$(IFS=,; echo "${names[*]}")
  cat >"$dir/slurm.conf" <<CONF || return 1
ClusterName=ftmpitest
SlurmctldHost=${names[0]}(${addresses[0]})
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
${node_lines}PartitionName=debug Nodes=$partition_nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  # Read from beside slurm.conf: the PMIx plugin's per-step directories stay in DIR.
  echo "PMIxCliTmpDirBase=$dir/pmix" >"$dir/mpi.conf" || return 1
  echo "SLURM_CONF=$dir/slurm.conf" >"$dir/env" || return 1

  if [ "$nodes" = 2 ]; then
    start_daemon "$dir" slurmctld "$simhosts" exec "${names[0]}" /usr/sbin/slurmctld -D -i
    for i in "${!names[@]}"; do
      # Each host's step daemons get a PMIx directory of their own at the path mpi.conf names.
      mkdir -p "$dir/pmix-${names[$i]}" || return 1
      "$simhosts" exec "${names[$i]}" mount --bind "$dir/pmix-${names[$i]}" "$dir/pmix" || return 1
      mount_cgroups_in "${names[$i]}" || return 1
      start_daemon "$dir" "slurmd-${names[$i]}" "$simhosts" exec "${names[$i]}" /usr/sbin/slurmd -D -N "${names[$i]}"
    done
  else
    start_daemon "$dir" slurmctld /usr/sbin/slurmctld -D -i
    start_daemon "$dir" slurmd /usr/sbin/slurmd -D -N "${names[0]}"
  fi
  # Until every node is idle, or a daemon has ended (it will not come back: waiting on would only wait).
  local daemons idle=yes pid name
  daemons=$(awk '{ printf "%s ", $1 }' "$dir/pids")
  wait_until "[ \"\$(SLURM_CONF='$dir/slurm.conf' on_head sinfo -h -o %T 2>/dev/null | sort -u)\" = idle ] ||
    ! all_alive $daemons" "$wait_seconds" || idle=no
  while read -r pid name; do
    if ! kill -0 "$pid" 2>/dev/null; then
      say "$name ended during start-up"
      # The port was free when chosen, but something bound it since.
      if grep -qs "Address already in use" "$dir"/log/*.out "$dir"/log/*.log; then return 75; fi
      return 1
    fi
  done <"$dir/pids"
  if [ "$idle" = no ]; then
    say "the nodes did not all become idle within ${wait_seconds}s"
    return 1
  fi
}

# slurmd wants the cgroup hierarchies under /sys/fs/cgroup, which a simulated host lacks (it mounts a
# sysfs of its own, for its interfaces): the machine's are mounted again there, as they are here (a
# cgroup v2 tree, or a tmpfs with one v1 hierarchy per directory).
mount_cgroups_in() {
  local host=$1 fstype source target options
  local mounts=()
  while read -r source target fstype options _; do
    case "$target" in /sys/fs/cgroup | /sys/fs/cgroup/*) mounts+=("$fstype $source $target $options") ;; esac
  done </proc/self/mounts
  [ "${#mounts[@]}" -gt 0 ] || return 0
  # shellcheck disable=SC2016 # expanded by the host's shell
  printf '%s\n' "${mounts[@]}" | "$simhosts" exec "$host" sh -c '
    mountpoint -q /sys/fs/cgroup && exit 0
    while read -r fstype source target options; do
      mkdir -p "$target" && mount -t "$fstype" -o "$options" "$source" "$target" || exit 1
    done'
}

up() {
  local dir=$1
  local reason
  reason=$(why_not)
  if [ -n "$reason" ]; then
    say "cannot run here: $reason"
    return 77
  fi
  if [ -e "$dir" ]; then
    say "$dir exists: give a new directory"
    return 1
  fi
  # A failed start-up leaves nothing running. A port taken between its choice and the daemon's bind
  # gets a fresh start on other ports, a few times. SLURM_HARNESS_CTLD_PORT is the first start's
  # controller port (the harness's own test gives one that is taken).
  local attempt rc ctld_port=${SLURM_HARNESS_CTLD_PORT:-}
  for attempt in 1 2 3; do
    mkdir -p "$dir" && : >"$dir/pids" || return 1
    rc=0
    start_all "$dir" "$ctld_port" || rc=$?
    [ "$rc" -ne 0 ] || return 0
    say "start-up failed; the last lines of its logs:"
    tail -n 5 "$dir"/log/* >&2 2>/dev/null || true
    down "$dir"
    [ "$rc" -eq 75 ] || return 1
    if [ "$attempt" -lt 3 ]; then
      say "a daemon's port was taken (start $attempt of 3): starting again on other ports"
    else
      say "a daemon's port was taken at each of 3 starts: giving up"
    fi
    ctld_port=""
  done
  return 1
}

down() {
  local dir=$1
  [ -d "$dir" ] || return 0
  local conf="$dir/slurm.conf"
  # Without a controller there are no jobs to cancel (and squeue would only retry for seconds).
  local ctld_pid
  ctld_pid=$(awk '$2 == "slurmctld" { print $1 }' "$dir/pids" 2>/dev/null || true)
  if [ -f "$conf" ] && [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
    # Cancelled jobs take their steps and tasks with them, after KillWait at most.
    local jobs
    jobs=$(SLURM_CONF="$conf" on_head squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086 # one job id per word
      SLURM_CONF="$conf" on_head scancel $jobs 2>/dev/null || true
      wait_until "[ -z \"\$(SLURM_CONF='$conf' on_head squeue -h -o %i 2>/dev/null)\" ]" 10 || say "jobs still listed: $jobs"
    fi
  fi
  # The daemons, by the pids recorded when they started, then whatever still carries the mark.
  local pids=()
  if [ -f "$dir/pids" ]; then
    while read -r pid _; do pids+=("$pid"); done <"$dir/pids"
  fi
  mapfile -t -O "${#pids[@]}" pids < <(marked_pids "$dir")
  if [ "${#pids[@]}" -gt 0 ]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    if ! wait_until "! any_alive ${pids[*]}" 5; then
      kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
  fi
  local left
  left=$(marked_pids "$dir")
  if [ -n "$left" ]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $left 2>/dev/null || true
    wait_until "[ -z \"\$(marked_pids '$dir')\" ]" 5 || say "processes left: $(marked_pids "$dir" | tr '\n' ' ')"
  fi
  if [ "$nodes" = 2 ]; then
    local h
    for h in "${sim_hosts[@]}"; do "$simhosts" exec "$h" umount "$dir/pmix" 2>/dev/null || true; done
  fi
  rm -rf "$dir"
}

run() {
  [ "${1:-}" != "--" ] || shift
  if [ "$#" -eq 0 ]; then
    say "run: no command"
    return 2
  fi
  # Global: the EXIT trap reads it after run has returned.
  run_dir=$(mktemp -u "${TMPDIR:-/tmp}/ftmpi-slurm.XXXXXX")
  trap 'down "$run_dir"' EXIT
  trap 'exit 143' TERM INT
  local rc=0
  up "$run_dir" || rc=$?
  [ "$rc" -eq 0 ] || return "$rc"
  env SLURM_CONF="$run_dir/slurm.conf" HARNESS_SLURM_DIR="$run_dir" "$@" || rc=$?
  return "$rc"
}

# Sourced (srun_check.sh), it only defines the functions above.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    check)
      reason=$(why_not)
      if [ -n "$reason" ]; then
        echo "SKIP: Slurm harness: $reason"
        exit 77
      fi
      ;;
    up) up "${2:?up DIR}" ;;
    down) down "${2:?down DIR}" ;;
    run)
      shift
      run "$@"
      ;;
    *)
      echo "usage: $0 check | up DIR | down DIR | run [--] CMD..." >&2
      exit 2
      ;;
  esac
fi
