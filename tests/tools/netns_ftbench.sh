#!/usr/bin/env bash
# netns_ftbench.sh FTBENCH : `ftbench table` across two simulated hosts, as an operator runs it on a
# cluster (--host, --launch-agent, the hosts' rails).
#
# Runs inside `simhosts.sh session` (hosts ftA and ftB, rails r1 and r2, the blackhole guard); ftbench
# runs on ftA and its jobs put rank 0 on ftA and rank 1 on ftB, so every packet stays inside the
# namespaces. Passes when the suite has no shared-memory row (the ranks share no host), a row per rail
# and one striped over both, each with reliability on and off; every row with reliability has figures,
# and its traffic (from the ranks' statistics) is on the row's rails and on no other: r1's row on
# 10.77.1.x, r2's on 10.77.2.x, the striped row on both, each carrying at least a quarter of the bytes.
# A row without reliability may instead say a datagram was lost. Figures are not judged.
set -euo pipefail
ftbench=${1:?usage: netns_ftbench.sh FTBENCH}
here=$(cd "$(dirname "$0")" && pwd)
simhosts=$here/../netns/simhosts.sh
# shellcheck source=test_lib.sh
. "$here/test_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR=$work/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"

"$simhosts" exec ftA "$ftbench" table --host ftA,ftB --launch-agent "$simhosts agent" --rails r1,r2 \
  --scale 0.02 --reps 1 --keep-disturbed --json > "$work/table.json" 2> "$work/err.log" ||
  { cat "$work/err.log"; fail "ftbench table across the hosts exited $?"; }
cat "$work/table.json"
jq -e '.hosts == "ftA,ftB"' "$work/table.json" > /dev/null || fail "the report does not name the hosts"
[ "$(jq '[.rows[] | select(.path == "shm")] | length' "$work/table.json")" -eq 0 ] ||
  fail "a shared-memory row, though the ranks share no host"
[ "$(jq '[.rows[] | .rails | join(",")] | unique | join(" ")' "$work/table.json")" = '"r1 r1,r2 r2"' ] ||
  fail "not a row set per rail and one striped over both"
[ "$(jq '.rows | length' "$work/table.json")" -eq 12 ] || fail "not 12 rows (3 rail sets x reliability off and 3 checksums)"
[ "$(jq '[.rows[] | select(.reliability == "on" and (.note != null or .latency_0_us <= 0 or .bandwidth_1m_MBps <= 0))] | length' \
    "$work/table.json")" -eq 0 ] || fail "a row with reliability has no figures"
[ "$(jq '[.rows[] | select(.note != null and .reliability != "off")] | length' "$work/table.json")" -eq 0 ] ||
  fail "a row that cannot lose data has a note"
# Each row's traffic: the rails it was given, nothing else.
check_traffic() {  # check_traffic RAILS PATTERN... : each row on RAILS has one traffic entry per PATTERN
  local rails=$1
  shift
  jq -c --arg r "$rails" '.rows[] | select(.note == null and (.rails | join(",")) == $r) | .traffic' "$work/table.json" |
    while read -r traffic; do
      [ "$(echo "$traffic" | jq length)" -eq "$#" ] || fail "rails $rails: traffic on $(echo "$traffic" | jq -c '[.[].rail]')"
      for pattern in "$@"; do
        echo "$traffic" | jq -e --arg p "$pattern" 'any(.[]; (.rail | test($p)) and .bytes_sent > 0 and .share >= 0.25)' > /dev/null ||
          fail "rails $rails: no traffic entry like '$pattern' with a quarter of the bytes: $traffic"
      done
    done
}
check_traffic r1 ' 10\.77\.1\.'
check_traffic r2 ' 10\.77\.2\.'
check_traffic r1,r2 ' 10\.77\.1\.' ' 10\.77\.2\.'
echo "netns_ftbench: the suite ran across both hosts, every row's traffic on its rails"
