#!/usr/bin/env bash
# ftbench_test.sh CASE FTBENCH : ftbench's own options, run for real (seconds each: one or two sizes,
# few iterations; the figures are not judged, tests are not timed).
#   shm     point-to-point kernels over shared memory: the Markdown table has a row per size and a
#           column per kernel, every figure a positive number; --svg draws a curve per kernel, and
#           rsvg-convert renders it
#   udp     the same over UDP on two loopback rails, as JSON: it parses, one result per kernel and size,
#           the library is ftmpi, and both rails carried bytes (striping); and as CSV
#   coll    the collective kernels on 3 ranks
#   table   `ftbench table --json` on one loopback rail: 8 rows (shared memory and UDP, each without
#           reliability and with it under crc32c, sum32 and none), each with positive figures, or (UDP
#           without reliability only) a note saying a datagram was lost; each row's traffic from the
#           engine's statistics names its rail (shm, or the UDP rail's address) and carried bytes; --svg
#           draws a curve per path, and rsvg-convert renders it
#   against beside Open MPI and MPICH (skipped, exit 77, when they are not installed; scripts/test.sh
#           installs them): the sweep's JSON has both peers' figures and a ratio per result, the picture
#           a curve per MPI; `table --against` has each peer on shared memory and on the network, and a
#           ratio to the best peer on each row
#   variant ftmpi beside two variants of itself over UDP, two rounds (--variant): the JSON has each
#           variant's parameters as given (a value with commas kept whole), its figures, its own job's
#           traffic (the variant that drops its first 2 KB resent frames), and per result a ratio to each
#           variant over both rounds; the Markdown a column per variant and per ratio; a variant whose
#           parameter ftrun refuses stops the sweep with ftrun's reason and status 2
#   lost    reliability off over UDP while every frame is dropped (path.fault=drop=1): the job can never
#           finish, and ftbench ends it at --time-limit, runs it twice more (a lost frame is what such a
#           job most likely waited for), then exits with status 1 and a line naming the limit and
#           the missing reliability, instead of waiting for ever; the same job with reliability on
#           resends until it stops dropping (drop=1 for its first 2 KB of traffic only) and prints its figure
#   errors  an unknown kernel, a bad size, an unknown or repeated path (before any peer is built), fewer than 2 ranks, an unknown MPI to compare
#           with, one that is not installed, --csv for the table, a --time-limit of 0, a malformed or
#           repeated --variant, one setting what --paths sets, --variant for the table: each one line
#           saying what is wrong and
#           exit status 2
set -uo pipefail
case_name=${1:?usage: ftbench_test.sh CASE FTBENCH}
ftbench=$2
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$work"' EXIT
# shellcheck source=test_lib.sh
. "$(dirname "$0")/test_lib.sh"
# Quick, and no watching for a disturbed machine: the suite runs beside other tests (the watch has its
# unit tests, tests/unit/bench/disturbance_test.cpp).
quick=(--scale 0.01 --reps 1 --keep-disturbed)

case $case_name in
shm)
  "$ftbench" "${quick[@]}" --paths shm --sizes 0,64k --kernels lat,bw,bibw,rate > "$work/out.log" 2>&1 ||
    fail "ftbench exited $?"
  "$ftbench" "${quick[@]}" --paths shm --sizes 8,64k --kernels lat,bw,bibw,rate --svg "$work/out.svg" > /dev/null 2>&1 ||
    fail "ftbench --svg exited $?"
  command -v rsvg-convert > /dev/null || fail "rsvg-convert is missing (scripts/install-deps.sh installs librsvg2-bin)"
  rsvg-convert -o "$work/out.png" "$work/out.svg" || fail "rsvg-convert cannot render ftbench's --svg"
  [ "$(head -c 4 "$work/out.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "the rendered picture is not a PNG"
  [ "$(grep -c '<polyline' "$work/out.svg")" -eq 4 ] || fail "not a curve per kernel in the picture"
  cat "$work/out.log"
  grep -q '^| size | lat (us) | bw (MB/s) | bibw (MB/s) | rate (Mmsg/s) |$' "$work/out.log" || fail "no table header"
  for size in "0 B" "64 KB"; do
    row=$(grep "^| $size |" "$work/out.log") || fail "no row for $size"
    [ "$(echo "$row" | tr '|' '\n' | sed '1,2d;$d' | wc -l)" -eq 4 ] || fail "row '$row' has not 4 figures"
  done
  grep "^| 64 KB |" "$work/out.log" | tr '|' '\n' | sed '1,2d;$d' | while read -r v; do
    awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || fail "a figure at 64 KB is not positive: $v"
  done ;;
udp)
  "$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1,127.0.0.2 --sizes 0,8k --kernels lat,bw --json \
    > "$work/out.json" 2> "$work/err.log" || fail "ftbench --json exited $?"
  cat "$work/out.json"
  jq -e '.library | startswith("ftmpi")' "$work/out.json" > /dev/null || fail "the library is not ftmpi"
  [ "$(jq '.results | length' "$work/out.json")" -eq 4 ] || fail "not one result per kernel and size"
  [ "$(jq '[.results[] | select(.kernel == "lat" and .unit == "us" and .value > 0)] | length' "$work/out.json")" -eq 2 ] ||
    fail "lat results are not two positive microsecond figures"
  [ "$(jq '[.rails[] | select(.bytes_sent > 0)] | length' "$work/out.json")" -eq 2 ] ||
    fail "not both rails carried bytes (the statistics say otherwise)"
  "$ftbench" "${quick[@]}" --paths udp --sizes 1m --kernels bw --csv > "$work/out.csv" 2> "$work/err.log" ||
    fail "ftbench --csv exited $?"
  cat "$work/out.csv"
  [ "$(head -1 "$work/out.csv")" = "kernel,bytes,value,unit" ] || fail "no CSV header"
  grep -q '^bw,1048576,[0-9.e+]*,MB/s$' "$work/out.csv" || fail "no bw line at 1 MB" ;;
coll)
  "$ftbench" "${quick[@]}" -n 3 --sizes 8,4k --kernels barrier,bcast,allreduce,alltoall --json \
    > "$work/out.json" 2> "$work/err.log" || fail "ftbench exited $?"
  cat "$work/out.json"
  [ "$(jq '.ranks' "$work/out.json")" -eq 3 ] || fail "not 3 ranks"
  # barrier is measured once; the others at both sizes
  [ "$(jq '.results | length' "$work/out.json")" -eq 7 ] || fail "not 7 results" ;;
table)
  "$ftbench" table "${quick[@]}" --rails 127.0.0.1 --json --sizes 8,64k --svg "$work/table.svg" \
    > "$work/table.json" 2> "$work/err.log" || fail "ftbench table exited $?"
  cat "$work/table.json"
  [ "$(jq '.rows | length' "$work/table.json")" -eq 8 ] || fail "not 8 rows"
  [ "$(jq '[.rows[] | select(.path == "shm")] | length' "$work/table.json")" -eq 4 ] || fail "not 4 shm rows"
  [ "$(jq '[.rows[] | select(.reliability == "on" and (.checksum | IN("crc32c", "sum32", "none")))] | length' \
      "$work/table.json")" -eq 6 ] || fail "not 3 checksums with reliability on per path"
  [ "$(jq '[.rows[] | select(.note == null and (.latency_0_us <= 0 or .latency_8k_us <= 0 or .bandwidth_1m_MBps <= 0))] | length' \
      "$work/table.json")" -eq 0 ] || fail "a row without a note has a figure that is not positive"
  [ "$(jq '[.rows[] | select(.note != null and (.path != "udp" or .reliability != "off"))] | length' \
      "$work/table.json")" -eq 0 ] || fail "a row that cannot lose data has a note"
  [ "$(jq '[.rows[] | select(.note == null and .path == "shm" and
             (.traffic | length == 1 and .[0].rail == "shm" and .[0].bytes_sent > 0))] | length' "$work/table.json")" -eq 4 ] ||
    fail "the shared-memory rows' traffic is not all on the shm rail"
  [ "$(jq '[.rows[] | select(.note == null and .path == "udp" and
             (.traffic | length != 1 or (.[0].rail | endswith("127.0.0.1") | not) or .[0].bytes_sent == 0))] | length' \
      "$work/table.json")" -eq 0 ] || fail "a UDP row's traffic is not on its rail 127.0.0.1"
  # The picture: a curve per path (shared memory, UDP on the rail), latency and bandwidth at both sizes.
  [ "$(jq -c '[.curves[] | .name]' "$work/table.json")" = '["ftmpi shm","ftmpi udp 127.0.0.1"]' ] || fail "not a curve per path"
  [ "$(jq '[.curves[].results[] | select(.value > 0)] | length' "$work/table.json")" -eq 8 ] ||
    fail "not 4 positive figures per curve (lat and bw at 8 B and 64 KB)"
  [ "$(grep -c '<polyline' "$work/table.svg")" -eq 4 ] || fail "not a line per path in each of the two panels"
  rsvg-convert -o "$work/table.png" "$work/table.svg" || fail "rsvg-convert cannot render the table's picture" ;;
against)
  for program in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.mpich; do
    command -v "$program" > /dev/null || { echo "SKIP: $program is not installed (scripts/install-peers.sh)"; exit 77; }
  done
  export XDG_CACHE_HOME=$work/cache  # the peers' builds of the kernels: made here, from the source beside ftbench
  "$ftbench" "${quick[@]}" --against openmpi,mpich --rounds 1 --kernels lat,bw --sizes 8,8k --json \
    --svg "$work/against.svg" > "$work/against.json" 2> "$work/err.log" || { cat "$work/err.log"; fail "ftbench --against exited $?"; }
  cat "$work/against.json"
  for peer in openmpi mpich; do
    [ -x "$work/cache/ftbench/ftbench-mpi-$peer" ] || fail "no build of the kernels for $peer"
    [ "$(jq --arg p "$peer" '[.peers[$p].results[] | select(.kernel == "lat" and .value > 0)] | length' "$work/against.json")" -eq 2 ] ||
      fail "$peer has not two positive latencies"
  done
  jq -e '.peers.openmpi.library | test("Open MPI")' "$work/against.json" > /dev/null || fail "openmpi's library is not Open MPI"
  jq -e '.peers.mpich.library | test("MPICH")' "$work/against.json" > /dev/null || fail "mpich's library is not MPICH"
  [ "$(jq '[.results[] | select(.kernel == "lat" and .ratio_to_best_peer > 0)] | length' "$work/against.json")" -eq 2 ] ||
    fail "not a ratio to the best peer on each latency"
  [ "$(jq '[.results[] | select(.kernel == "lat" and .ratio_to_peer.openmpi.rounds == 1 and .ratio_to_peer.mpich.median > 0)] | length' "$work/against.json")" -eq 2 ] ||
    fail "not a round-by-round ratio to each peer on each latency"
  [ "$(grep -c '<polyline' "$work/against.svg")" -eq 6 ] || fail "not a curve per MPI in each of the two panels"
  "$ftbench" table "${quick[@]}" --against openmpi,mpich --rounds 1 --rails 127.0.0.1 --json \
    > "$work/table.json" 2> "$work/err.log" || { cat "$work/err.log"; fail "ftbench table --against exited $?"; }
  cat "$work/table.json"
  for peer in openmpi mpich; do
    [ "$(jq --arg p "$peer" '[.peers[$p].rows[] | select(.latency_0_us > 0 and .bandwidth_1m_MBps > 0) | .path] | sort | join(",")' \
        "$work/table.json")" = '"network,shm"' ] || fail "$peer has not a shared-memory and a network row with figures"
  done
  [ "$(jq '[.rows[] | select(.note == null and (.ratio_to_best_peer.latency_0_us <= 0 or .ratio_to_best_peer.bandwidth_1m_MBps <= 0))] | length' \
      "$work/table.json")" -eq 0 ] || fail "a row with figures has no ratio to the best peer" ;;
variant)
  "$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1 --sizes 0,1k --kernels lat --rounds 2 --json \
    --variant off:engine.reliability=off --variant lossy:path.fault=drop=1,for=2KB,engine.retransmit.min=1ms \
    > "$work/v.json" 2> "$work/v.log" || { cat "$work/v.log"; fail "ftbench with variants exited $?"; }
  cat "$work/v.json"
  jq -e '.variants | keys == ["lossy", "off"]' "$work/v.json" > /dev/null || fail "not both variants in the JSON"
  jq -e '.variants.off.params == ["engine.reliability=off"] and
         .variants.lossy.params == ["path.fault=drop=1,for=2KB", "engine.retransmit.min=1ms"]' "$work/v.json" > /dev/null ||
    fail "the variants' parameters are not as given"
  jq -e '[.variants[].results[] | select(.value > 0)] | length == 4' "$work/v.json" > /dev/null ||
    fail "not a figure per variant, kernel and size"
  # Each variant ran its own job: only the lossy one had frames to resend.
  jq -e '[.variants.lossy.rails[].retransmits] | add > 0' "$work/v.json" > /dev/null ||
    fail "the lossy variant resent nothing: its parameters did not reach its job"
  jq -e '[.variants.off.rails[].retransmits] | add == 0' "$work/v.json" > /dev/null ||
    fail "the variant without reliability resent frames"
  jq -e '[.results[] | .ratio_to_variant | .off, .lossy | select(.rounds == 2 and .median > 0 and
          .low_quartile <= .median and .median <= .high_quartile)] | length == 4' "$work/v.json" > /dev/null ||
    fail "not a ratio to each variant over both rounds per result"
  jq -e 'has("peers") | not' "$work/v.json" > /dev/null || fail "variants reported as peers"
  "$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1 --sizes 0 --kernels lat --rounds 2 \
    --variant off:engine.reliability=off > "$work/v.md" 2> "$work/v.log" || { cat "$work/v.log"; fail "ftbench (Markdown) exited $?"; }
  cat "$work/v.md"
  grep -q "^  off: ftmpi .*, with engine.reliability=off$" "$work/v.md" || fail "the Markdown does not say what the variant is"
  grep -Eq "^\| 0 B \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \([0-9.]+-[0-9.]+\) \|$" "$work/v.md" ||
    fail "no row with both figures and the ratio with its quartiles"
  out=$("$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1 --sizes 0 --kernels lat --variant bad:engine.reliability=sometimes 2>&1)
  status=$?
  echo "$out"
  [ "$status" -eq 2 ] || fail "a variant with a refused parameter exited $status, not 2"
  echo "$out" | grep -q "engine.reliability" || fail "ftrun's reason for refusing the variant is not said" ;;
lost)
  "$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1 --sizes 0 --kernels lat --time-limit 3 \
    --param engine.reliability=off --param path.fault=drop=1 > "$work/out.log" 2>&1
  status=$?
  cat "$work/out.log"
  [ "$status" -eq 1 ] || fail "ftbench exited $status, not 1, when its job could not finish"
  [ "$(grep -c "ended at its time limit of 3 s without reliability (a frame lost): running it again" "$work/out.log")" -eq 2 ] ||
    fail "the job was not run again twice before ftbench gave up"
  grep -q "did not finish within its time limit of 3 s: with engine.reliability=off" "$work/out.log" ||
    fail "ftbench does not say that the job reached its time limit without reliability"
  # With reliability the same losses are repaired: drop every frame for a while, then none.
  "$ftbench" "${quick[@]}" --paths udp --rails 127.0.0.1 --sizes 0 --kernels lat --time-limit 120 --json \
    --param path.fault=drop=1,for=2KB > "$work/on.json" 2> "$work/on.log" || { cat "$work/on.log"; fail "ftbench with reliability exited $?"; }
  cat "$work/on.json"
  jq -e '[.results[] | select(.kernel == "lat" and .value > 0)] | length == 1' "$work/on.json" > /dev/null ||
    fail "no latency figure with reliability on"
  jq -e '[.rails[].retransmits] | add > 0' "$work/on.json" > /dev/null || fail "no frame was resent: nothing was dropped" ;;
errors)
  expect() {
    local why=$1
    shift
    out=$("$@" 2>&1)
    local status=$?
    [ "$status" -eq 2 ] || fail "'$*' exited $status, not 2: $out"
    echo "$out" | grep -q -e "$why" || fail "'$*' does not say '$why': $out"
  }
  expect "unknown kernel.*'foo'" "$ftbench" --kernels foo "${quick[@]}"
  expect "not a size.*'1x'" "$ftbench" --sizes 0,1x "${quick[@]}"
  expect "unknown path kind 'ib'" "$ftbench" --paths ib "${quick[@]}"
  expect "--paths: unknown path kind 'shmem'" "$ftbench" --paths shmem,udp --against openmpi "${quick[@]}"
  expect "--paths: path kind 'udp' is given twice" "$ftbench" --paths udp,udp "${quick[@]}"
  expect "not in range 2" "$ftbench" -n 1 "${quick[@]}"
  expect "unknown MPI 'lam'" "$ftbench" --against lam "${quick[@]}"
  # A peer that is not installed: nothing of it on PATH (ftbench finds ftrun beside itself).
  expect "mpicc.mpich is not installed (apt-get install libmpich-dev mpich)" env PATH=/nonexistent "$ftbench" --against mpich "${quick[@]}"
  expect "table prints Markdown or --json" "$ftbench" table --csv "${quick[@]}"
  expect "--time-limit: Value 0 not in range 1" "$ftbench" --time-limit 0 "${quick[@]}"
  expect "--variant 'off': no ':' after its name" "$ftbench" --variant off "${quick[@]}"
  expect "--variant 'openmpi:engine.reliability=off': 'openmpi' names a peer MPI" "$ftbench" --variant openmpi:engine.reliability=off "${quick[@]}"
  expect "two variants named 'off'" "$ftbench" --variant off:engine.reliability=off --variant off:engine.checksum=none "${quick[@]}"
  expect "--variant 'shm': --paths sets path.kinds for every job" "$ftbench" --paths udp --variant shm:path.kinds=shm "${quick[@]}"
  expect "variant belongs to the sweep" "$ftbench" table --variant off:engine.reliability=off "${quick[@]}"
  echo "ftbench_test: every bad input said so with status 2" ;;
*) echo "ftbench_test.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
echo "ftbench_test: $case_name passed"
