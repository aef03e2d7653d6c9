#!/usr/bin/env bash
# slurm_harness.sh starts again on other ports when a daemon finds its port taken between the harness's
# choice and its bind (another test's connection or daemon can take it). A first harness holds its
# controller's port; a second one is told to start its controller there first (SLURM_HARNESS_CTLD_PORT):
# it must say the port was taken, start again, and come up with its node idle, on another port.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/slurm_harness.sh
"$harness" check || exit $?
work=$(mktemp -d "${TMPDIR:-/tmp}/ftmpi-harness-port.XXXXXX")
chmod 0755 "$work"  # munged wants every directory above its socket searchable by all
first=$work/first
trap '"$harness" down "$first"; rm -rf "$work"' EXIT
trap 'exit 143' TERM INT  # a signal's exit runs the EXIT trap too (CTest's timeout included)

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/out "$work"/err; do
    [ -s "$f" ] && { echo "--- $(basename "$f"):" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}

"$harness" up "$first" || fail "the first harness did not start"
taken=$(sed -n 's/^SlurmctldPort=//p' "$first/slurm.conf")
[ -n "$taken" ] || fail "no SlurmctldPort in the first harness's slurm.conf"
ss -Htln "sport = :$taken" | grep -q . || fail "nothing listens on the first controller's port $taken"

# The second harness's command prints its controller's port and its node's state.
status=0
# shellcheck disable=SC2016 # expanded by the second harness's shell
SLURM_HARNESS_CTLD_PORT=$taken timeout 100 "$harness" run -- sh -c \
  'sed -n "s/^SlurmctldPort=//p" "$SLURM_CONF"; sinfo -h -o %T' >"$work/out" 2>"$work/err" || status=$?
[ "$status" -eq 0 ] || fail "the second harness exited $status"
grep -q "port was taken (start 1 of 3)" "$work/err" || fail "the second harness did not say its port was taken"
port=$(sed -n 1p "$work/out")
state=$(sed -n 2p "$work/out")
{ [ -n "$port" ] && [ "$port" != "$taken" ]; } || fail "the second harness's controller port is '$port' (taken: $taken)"
[ "$state" = idle ] || fail "the second harness's node is '$state', not idle"
# The first one is untouched.
[ "$(SLURM_CONF=$first/slurm.conf sinfo -h -o %T)" = idle ] || fail "the first harness's node is no longer idle"
echo "second harness: port $taken taken, started again on $port, node idle"
