#!/bin/sh
# A launch agent for tests without namespaces: called like ssh (fake_agent.sh HOST COMMANDLINE), it runs
# the command line on this host, as a remote shell would, with FAKE_AGENT_HOST=HOST so that the rank can
# say where it was sent. The host "unknown-host" fails the way ssh does: a message and exit status 255.
[ $# -eq 2 ] || { echo "fake_agent.sh: usage: fake_agent.sh HOST COMMANDLINE" >&2; exit 255; }
if [ "$1" = unknown-host ]; then
  echo "fake_agent.sh: Could not resolve hostname $1: Name or service not known" >&2
  exit 255
fi
FAKE_AGENT_HOST=$1
export FAKE_AGENT_HOST
exec sh -c "$2"
