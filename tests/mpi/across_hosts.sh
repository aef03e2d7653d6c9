#!/usr/bin/env bash
# across_hosts.sh SIMHOSTS FTRUN SPREAD PROGRAM [ARGS...]: runs an MPI test program across the two
# simulated hosts of SIMHOSTS (tests/netns/simhosts.sh; run it under `simhosts.sh session`), with ftrun
# started on ftA and SPREAD ranks per host ("2,2": two on ftA, two on ftB), with the default paths:
# shared memory between the ranks of a host, UDP between the hosts. Exits with the job's status, or 1 if
# ftrun called its launch agent other than once, for ftB (it starts one agent per other host, whatever
# the number of ranks there).
set -euo pipefail
simhosts=${1:?usage: across_hosts.sh SIMHOSTS FTRUN SPREAD PROGRAM [ARGS...]}
ftrun=${2:?}
spread=${3:?}
shift 3
IFS=, read -r on_a on_b <<<"$spread"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The harness's agent, logging each call's host.
cat >"$work/agent" <<AGENT
#!/bin/sh
echo "\$1" >>"$work/calls"
exec "$simhosts" agent "\$@"
AGENT
chmod +x "$work/agent"
cd /tmp
status=0
"$simhosts" exec ftA "$ftrun" --launch-agent "$work/agent" -n $((on_a + on_b)) \
  --host "ftA:$on_a,ftB:$on_b" --timeout 150 "$@" || status=$?
calls=$(cat "$work/calls" 2>/dev/null || true)
if [ "$calls" != ftB ]; then
  echo "across_hosts.sh: expected one launch-agent call, for ftB; got: ${calls:-none}" >&2
  exit 1
fi
exit "$status"
