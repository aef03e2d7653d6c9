# Shared by the tool tests (ftpath_test.sh, ftinject_test.sh): sourced after they set $work.

# Says why, shows the end of every log under $work, and fails the test.
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; grep -v '^progress ' "$f" | tail -25 >&2; }; done
  exit 1
}

# Waits (at most $2 s, default 60) until the command $1 succeeds.
wait_for() {
  local deadline=$((SECONDS + ${2:-60}))
  until eval "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}
