#!/usr/bin/env bash
# simhosts.sh - two simulated hosts for ftmpi's multi-host tests, made of Linux namespaces (root only).
#
#   ftA (head node: ftrun runs here)            ftB
#     m0 10.77.0.1/24  <--- management --->       m0 10.77.0.2/24   ftrun's control channel to ftB's ranks
#     r1 10.77.1.1/24  <------ rail 1 ----->      r1 10.77.1.2/24
#     r2 10.77.2.1/24  <------ rail 2 ----->      r2 10.77.2.2/24
#
# Each host is a network namespace (ip netns) plus persistent mount, UTS and IPC namespaces bound onto
# files under $SIMHOSTS_RUN/<host>/, with its own tmpfs /dev/shm, /sys (showing its own interfaces) and
# hostname, and an /etc/hosts naming both hosts by their management addresses (as a cluster's does, so
# that ftrun can tell which of its addresses a host reaches). Every process entering a host (exec, agent)
# joins all four, so ranks on one simulated host share /dev/shm and see the same hostname, and ranks on
# different hosts cannot share memory.
#
# Usage (root):
#   simhosts.sh up                      create both hosts (removing stale ones first)
#   simhosts.sh down                    remove everything, killing processes left inside; idempotent
#   simhosts.sh session CMD...          up, run CMD, down (also on failure or signal); CMD's exit status.
#                                       Holds the lock throughout: concurrent sessions wait their turn.
#   simhosts.sh exec HOST CMD...        run CMD inside HOST (in the caller's directory)
#   simhosts.sh agent HOST COMMANDLINE  like ssh, for ftrun --launch-agent: exec sh -c COMMANDLINE inside
#                                       HOST, so the rank replaces this process and gets its signals;
#                                       exits 255 itself when HOST is unknown (as ssh does)
#   simhosts.sh link HOST RAIL up|down  carrier fault (the sender sees ENETUNREACH)
#   simhosts.sh blackhole HOST RAIL     nftables: drop all UDP in and out on RAIL inside HOST
#   simhosts.sh loss HOST RAIL PCT      nftables: drop PCT% of UDP in and out (numgen random)
#   simhosts.sh wire HOST RAIL PCT      netdev hooks: silently drop PCT% of ALL frames both ways (100 = cut)
#   simhosts.sh rate HOST RAIL RATE     HTB rate limit on RAIL's egress inside HOST ("200mbit"); "off" removes
#   simhosts.sh heal HOST               undo every fault above inside HOST (rules, rate limits, links up)
#   simhosts.sh status                  addresses, links, qdiscs and rules of both hosts
#   simhosts.sh counters HOST           one line per nftables counter inside HOST:
#                                       "<family> <table> <chain> packets N bytes M <rule>"
# HOST is ftA or ftB (or A, B); RAIL is 1, 2, r1, r2 or m0. Names: SIMHOSTS_A, SIMHOSTS_B (defaults ftA,
# ftB); state directory SIMHOSTS_RUN (default /run/ftmpi-simhosts).
#
# Exit status 77: cannot run here (not root, or a tool is missing); CTest's SKIP_RETURN_CODE.
#
# SAFETY: while the hosts exist, a blackhole route for 10.77.0.0/16 in the root namespace makes any test
# packet sent from outside a namespace fail locally instead of leaving the machine. `down` removes it.
#
# Locking: up and down take an exclusive flock on $SIMHOSTS_LOCK (default /run/ftmpi-simhosts.lock), so
# concurrent callers cannot create and destroy under each other. A test that uses the hosts must hold that
# lock for as long as it uses them: run it under `session` (which does, for CTest: no fixture needed), or
# hold the lock yourself and set SIMHOSTS_LOCK_HELD=1 so that up/down do not wait for it. The other
# commands take no lock: they act on hosts their caller's session owns.
set -euo pipefail

HOST_A=${SIMHOSTS_A:-ftA}
HOST_B=${SIMHOSTS_B:-ftB}
RUN=${SIMHOSTS_RUN:-/run/ftmpi-simhosts}
LOCK=${SIMHOSTS_LOCK:-/run/ftmpi-simhosts.lock}
LOCK_WAIT=${SIMHOSTS_LOCK_WAIT:-600}
GUARD=10.77.0.0/16
SELF=$(readlink -f "$0")
# device:subnet-octet; m0 first, so that ftrun's address list (interface order) starts with it
LINKS=(m0:0 r1:1 r2:2)

DIE_STATUS=1  # the agent dies with 255, as ssh does
die() { echo "simhosts.sh: $*" >&2; exit "$DIE_STATUS"; }
skip() { echo "simhosts.sh: SKIP: $*" >&2; exit 77; }

need_root() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (network, mount, UTS and IPC namespaces)"
  local t
  for t in ip nft tc unshare nsenter flock mountpoint; do
    command -v "$t" >/dev/null 2>&1 || skip "needs '$t'"
  done
  # Root inside a container may still be refused namespaces (no CAP_SYS_ADMIN, seccomp).
  unshare --net --mount --uts --ipc true 2>/dev/null || skip "this machine refuses new namespaces to root"
}

# Exclusive lock for up/down, unless the caller holds it already.
lock() {
  [ "${SIMHOSTS_LOCK_HELD:-0}" = 1 ] && return 0
  exec {LOCK_FD}>>"$LOCK"
  flock -w "$LOCK_WAIT" "$LOCK_FD" || die "waited ${LOCK_WAIT}s for $LOCK"
}

host_name() {  # HOST argument -> namespace name
  case "$1" in
    "$HOST_A" | A) echo "$HOST_A" ;;
    "$HOST_B" | B) echo "$HOST_B" ;;
    *) return 1 ;;
  esac
}
host_or_die() { host_name "$1" || die "unknown host '$1' (hosts: $HOST_A, $HOST_B)"; }
rail_dev() {
  case "$1" in
    1 | r1) echo r1 ;;
    2 | r2) echo r2 ;;
    m0) echo m0 ;;
    *) die "unknown rail '$1' (rails: 1, 2, r1, r2, m0)" ;;
  esac
}
in_ns() { local n=$1; shift; ip netns exec "$n" "$@"; }
pct_or_die() { if ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -gt 100 ]; then die "$1: PCT '$2' is not 0 to 100"; fi; }

# A host's namespaces as nsenter options, in NS_OPTS. Mount namespaces bound onto files are visible only
# in the mount namespace where they were bound (the kernel does not copy them into new ones), so a caller
# inside a simulated host (ftrun's agent in ftA) first returns to that namespace: see enter_home.
ns_opts() {
  local h=$1
  NS_OPTS=(--net="/run/netns/$h" --mount="$RUN/$h/mnt" --uts="$RUN/$h/uts" --ipc="$RUN/$h/ipc")
}

# Re-executes this script in the mount namespace `up` ran in, if the caller is elsewhere.
enter_home() {
  local home mine pid
  [ -r "$RUN/home-mnt" ] || die "the simulated hosts are not up ($RUN/home-mnt missing)"
  home=$(cat "$RUN/home-mnt")
  mine=$(readlink /proc/self/ns/mnt)
  [ "$mine" = "$home" ] && return 0
  for pid in /proc/1 /proc/[0-9]*; do
    pid=${pid#/proc/}
    if [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "$home" ]; then
      exec nsenter --mount="/proc/$pid/ns/mnt" -- "$SELF" "$@"
    fi
  done
  die "no process left in the mount namespace the hosts were made in"
}

# Waits for one device to report operstate up, if its peer end is administratively up (else it cannot).
wait_link_up() {
  local n=$1 d=$2 peer deadline=$((SECONDS + 10))
  if [ "$n" = "$HOST_A" ]; then peer=$HOST_B; else peer=$HOST_A; fi
  ip -n "$peer" link show dev "$d" | grep -q '<[^>]*\bUP\b' || return 0
  until [ "$(in_ns "$n" cat "/sys/class/net/$d/operstate")" = up ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "$d in $n did not come up within 10 s"
    sleep 0.05
  done
}

wait_links_up() {
  local deadline=$((SECONDS + 10)) h l n
  while :; do
    n=0
    for h in "$HOST_A" "$HOST_B"; do
      for l in "${LINKS[@]}"; do
        [ "$(in_ns "$h" cat "/sys/class/net/${l%%:*}/operstate")" = up ] && n=$((n + 1))
      done
    done
    [ "$n" -eq $((2 * ${#LINKS[@]})) ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || die "links did not come up within 10 s"
    # operstate follows the kernel's linkwatch work, which has no event to wait on from a shell
    sleep 0.05
  done
}

make_host_namespaces() {
  local h=$1
  mkdir -p "$RUN/$h"
  touch "$RUN/$h/mnt" "$RUN/$h/uts" "$RUN/$h/ipc"
  # unshare binds the new namespaces onto the files from outside (they persist after sh exits); sh joins
  # the host's network namespace first so that its /sys shows that namespace's interfaces.
  # shellcheck disable=SC2016  # $0 is sh's, not ours
  unshare --mount="$RUN/$h/mnt" --uts="$RUN/$h/uts" --ipc="$RUN/$h/ipc" --propagation private \
    nsenter --net="/run/netns/$h" -- sh -c '
      mount -t tmpfs -o size=2g,mode=1777 ftshm /dev/shm
      umount -l /sys 2>/dev/null || true
      mount -t sysfs sysfs /sys
      mount --bind "$1" /etc/hosts
      echo "$0" >/proc/sys/kernel/hostname' "$h" "$RUN/hosts"
}

up() {
  need_root
  lock
  teardown
  ip route replace blackhole "$GUARD"
  mkdir -p "$RUN"
  # Namespace files may only be bound on a mount that is not shared.
  if ! mountpoint -q "$RUN"; then mount --bind "$RUN" "$RUN"; fi
  mount --make-private "$RUN"
  readlink /proc/self/ns/mnt >"$RUN/home-mnt"
  local h l dev oct
  for h in "$HOST_A" "$HOST_B"; do
    ip netns add "$h"
    ip -n "$h" link set lo up
  done
  for l in "${LINKS[@]}"; do
    dev=${l%%:*} oct=${l##*:}
    # Made with each end in its namespace already; the same device name on both sides.
    ip link add "sa$dev$$" netns "$HOST_A" type veth peer name "sb$dev$$" netns "$HOST_B"
    ip -n "$HOST_A" link set "sa$dev$$" name "$dev"
    ip -n "$HOST_B" link set "sb$dev$$" name "$dev"
    ip -n "$HOST_A" addr add "10.77.$oct.1/24" dev "$dev"
    ip -n "$HOST_B" addr add "10.77.$oct.2/24" dev "$dev"
    ip -n "$HOST_A" link set "$dev" up
    ip -n "$HOST_B" link set "$dev" up
  done
  printf '127.0.0.1 localhost\n::1 localhost\n10.77.0.1 %s\n10.77.0.2 %s\n' "$HOST_A" "$HOST_B" >"$RUN/hosts"
  for h in "$HOST_A" "$HOST_B"; do make_host_namespaces "$h"; done
  wait_links_up
}

# Removes everything; no lock (callers hold it).
teardown() {
  local h f pids
  for h in "$HOST_A" "$HOST_B"; do
    if [ -e "/run/netns/$h" ]; then
      # Processes left inside would keep the namespace (and its veth ends) alive.
      pids=$(ip netns pids "$h" 2>/dev/null || true)
      # shellcheck disable=SC2086
      [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
      ip netns del "$h" 2>/dev/null || true
    fi
    for f in mnt uts ipc; do
      if mountpoint -q "$RUN/$h/$f" 2>/dev/null; then umount "$RUN/$h/$f" 2>/dev/null || umount -l "$RUN/$h/$f"; fi
    done
    rm -rf "${RUN:?}/$h"
  done
  rm -f "$RUN/home-mnt"
  if mountpoint -q "$RUN" 2>/dev/null; then umount "$RUN" 2>/dev/null || umount -l "$RUN"; fi
  rmdir "$RUN" 2>/dev/null || true
  ip route del blackhole "$GUARD" 2>/dev/null || true
}

down() {
  need_root
  lock
  teardown
}

session() {
  [ $# -gt 0 ] || die "session needs a command"
  need_root
  lock
  export SIMHOSTS_LOCK_HELD=1
  trap 'teardown' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  up
  local rc=0
  "$@" || rc=$?
  return "$rc"
}

exec_in() {
  local h
  h=$(host_or_die "$1")
  shift
  [ $# -gt 0 ] || die "exec needs a command"
  ns_opts "$h"
  exec nsenter "${NS_OPTS[@]}" --wdns="$PWD" -- "$@"
}

agent() {
  local h
  # Like ssh: its own failures exit 255, so that ftrun can tell them from the rank's status.
  [ $# -eq 2 ] || { echo "simhosts.sh agent: usage: agent HOST COMMANDLINE" >&2; exit 255; }
  h=$(host_name "$1") || { echo "simhosts.sh agent: unknown host '$1' (hosts: $HOST_A, $HOST_B)" >&2; exit 255; }
  ns_opts "$h"
  exec nsenter "${NS_OPTS[@]}" -- sh -c "$2"
}

set_link() {
  local n d
  n=$(host_or_die "$1")
  d=$(rail_dev "$2")
  case "$3" in up | down) ;; *) die "link: '$3' is not up or down" ;; esac
  ip -n "$n" link set "$d" "$3"
  [ "$3" = down ] || wait_link_up "$n" "$d"
}

nft_base() {  # the fault table inside a host; idempotent
  in_ns "$1" nft -f - <<NFT
table inet ftfault {
  chain in  { type filter hook input  priority -10; policy accept; }
  chain out { type filter hook output priority -10; policy accept; }
}
NFT
}

blackhole() {
  local n d
  n=$(host_or_die "$1")
  d=$(rail_dev "$2")
  nft_base "$n"
  in_ns "$n" nft add rule inet ftfault in iifname "$d" meta l4proto udp counter drop
  in_ns "$n" nft add rule inet ftfault out oifname "$d" meta l4proto udp counter drop
}

loss() {
  local n d
  n=$(host_or_die "$1")
  d=$(rail_dev "$2")
  pct_or_die loss "$3"
  nft_base "$n"
  in_ns "$n" nft add rule inet ftfault in iifname "$d" meta l4proto udp numgen random mod 100 \< "$3" counter drop
  in_ns "$n" nft add rule inet ftfault out oifname "$d" meta l4proto udp numgen random mod 100 \< "$3" counter drop
}

wire() {
  local n d m
  n=$(host_or_die "$1")
  d=$(rail_dev "$2")
  pct_or_die wire "$3"
  # nft refuses "numgen random mod 100 < 100" (the range is 0-99): 100% is an unconditional drop.
  if [ "$3" -ge 100 ]; then m=""; else m="numgen random mod 100 < $3"; fi
  in_ns "$n" nft delete table netdev "ftwire_$d" 2>/dev/null || true
  in_ns "$n" nft -f - <<NFT
table netdev ftwire_$d {
  chain eg { type filter hook egress  device "$d" priority 0; policy accept; $m counter drop; }
  chain ig { type filter hook ingress device "$d" priority 0; policy accept; $m counter drop; }
}
NFT
}

rate() {
  local n d
  n=$(host_or_die "$1")
  d=$(rail_dev "$2")
  if [ "$3" = off ]; then
    in_ns "$n" tc qdisc del dev "$d" root 2>/dev/null || true
  else
    # netem is not available; HTB shapes (one class for all traffic). Its burst must hold at least one
    # timer tick of traffic, or the rate falls short of what was asked.
    in_ns "$n" tc qdisc replace dev "$d" root handle 1: htb default 10
    in_ns "$n" tc class replace dev "$d" parent 1: classid 1:10 htb rate "$3" ceil "$3" burst 256kb cburst 256kb quantum 60000
  fi
}

heal() {
  local n l
  n=$(host_or_die "$1")
  in_ns "$n" nft delete table inet ftfault 2>/dev/null || true
  for l in "${LINKS[@]}"; do
    in_ns "$n" nft delete table netdev "ftwire_${l%%:*}" 2>/dev/null || true
    in_ns "$n" tc qdisc del dev "${l%%:*}" root 2>/dev/null || true
    ip -n "$n" link set "${l%%:*}" up
  done
  for l in "${LINKS[@]}"; do wait_link_up "$n" "${l%%:*}"; done
}

status() {
  local h
  for h in "$HOST_A" "$HOST_B"; do
    echo "== $h"
    ip -n "$h" -br addr
    ip -n "$h" -br link
    in_ns "$h" tc qdisc show
    in_ns "$h" nft list ruleset
  done
}

counters() {
  local n
  n=$(host_or_die "$1")
  in_ns "$n" nft list ruleset | awk '
    $1 == "table" { family = $2; table = $3 }
    $1 == "chain" { chain = $2 }
    /counter packets/ {
      line = $0; sub(/^[ \t]+/, "", line)
      for (i = 1; i <= NF; i++) if ($i == "packets") { packets = $(i + 1); bytes = $(i + 3) }
      print family, table, chain, "packets", packets, "bytes", bytes, line
    }'
}

cmd=${1:-}
shift || true
case "$cmd" in
  up) up ;;
  down) down ;;
  session) session "$@" ;;
  exec) need_root; enter_home exec "$@"; exec_in "$@" ;;
  agent)
    DIE_STATUS=255
    [ "$(id -u)" -eq 0 ] || { echo "simhosts.sh agent: needs root" >&2; exit 255; }
    enter_home agent "$@"
    agent "$@"
    ;;
  link) need_root; [ $# -eq 3 ] || die "usage: link HOST RAIL up|down"; set_link "$@" ;;
  blackhole) need_root; [ $# -eq 2 ] || die "usage: blackhole HOST RAIL"; blackhole "$@" ;;
  loss) need_root; [ $# -eq 3 ] || die "usage: loss HOST RAIL PCT"; loss "$@" ;;
  wire) need_root; [ $# -eq 3 ] || die "usage: wire HOST RAIL PCT"; wire "$@" ;;
  rate) need_root; [ $# -eq 3 ] || die "usage: rate HOST RAIL RATE|off"; rate "$@" ;;
  heal) need_root; [ $# -eq 1 ] || die "usage: heal HOST"; heal "$@" ;;
  status) need_root; status ;;
  counters) need_root; [ $# -eq 1 ] || die "usage: counters HOST"; counters "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
