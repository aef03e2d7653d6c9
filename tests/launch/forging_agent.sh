#!/usr/bin/env bash
# A launch agent that, instead of starting ftrun-host, connects to ftrun's agent listener itself and sends
# what no agent of the job would: the HOST argument chooses what. wrong-secret: an agent hello with a
# secret that is not the job's; rank-hello: a rank's hello (the rank protocol's type 1); truncated: the
# first 10 bytes of an agent hello, then EOF. It waits for ftrun to close the connection, then exits 1,
# as an agent that was refused does. Only to 127.0.0.1 (the tests keep ftrun there).
set -euo pipefail
[ $# -eq 2 ] || { echo "forging_agent.sh: usage: forging_agent.sh HOST COMMANDLINE" >&2; exit 255; }
addr=$(printf '%s' "$2" | grep -o "FTMPI_RTE_ADDR=[0-9.:,]*" | cut -d= -f2 | cut -d, -f1)
[ "${addr%:*}" = 127.0.0.1 ] || { echo "forging_agent.sh: ftrun is not on 127.0.0.1 ($addr)" >&2; exit 255; }
exec 3<>"/dev/tcp/127.0.0.1/${addr##*:}"
secret=$(printf 'A%.0s' $(seq 32))
hello="\x25\x00\x00\x00\x40\x01\x00${secret}\x01\x00x"  # agent_hello, version 1, host "x"
case $1 in
  wrong-secret) printf "$hello" >&3 ;;
  rank-hello) printf "\x2a\x00\x00\x00\x01\x02\x00\x00\x00\x00\x00\x01\x00\x00\x00${secret}" >&3 ;;
  truncated) printf "$hello" | head -c 10 >&3; exec 3>&- ; exit 1 ;;
  *) echo "forging_agent.sh: unknown case '$1'" >&2; exit 255 ;;
esac
cat <&3 >/dev/null || true
exit 1
