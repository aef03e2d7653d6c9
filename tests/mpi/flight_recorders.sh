#!/usr/bin/env bash
# flight_recorders.sh FTRUN MPI_FATAL : a job that fails leaves every rank's flight recorder for the
# post-mortem (docs/ftinject.md, "After an abnormal end"). Rank 1 of 3 calls MPI_Abort: it writes its own
# and says so; before terminating the others ftrun asks them for theirs and names each file. Every file
# must be there, zstd, named on stderr.
set -uo pipefail
ftrun=${1:?usage: flight_recorders.sh FTRUN MPI_FATAL}
program=${2:?usage: flight_recorders.sh FTRUN MPI_FATAL}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
FTMPI_ENGINE_FLIGHT_DIR=$dir "$ftrun" -n 3 --timeout 25 "$program" abort 2> "$dir/stderr"
status=$?
cat "$dir/stderr"
[ "$status" -eq 7 ] || { echo "FAIL: the job exited $status, not 7 (MPI_Abort's code)" >&2; exit 1; }
for rank in 0 1 2; do
  file=$(ls "$dir"/*.rank$rank.flight.zst 2>/dev/null)
  [ -n "$file" ] || { echo "FAIL: rank $rank wrote no flight recorder" >&2; exit 1; }
  [ "$(head -c 4 "$file" | od -An -tx1 | tr -d ' ')" = 28b52ffd ] || { echo "FAIL: $file is not zstd" >&2; exit 1; }
  grep -q "rank $rank.* flight recorder .*$file" "$dir/stderr" || { echo "FAIL: nothing names $file" >&2; exit 1; }
done
echo "flight_recorders: all 3 ranks wrote theirs"
