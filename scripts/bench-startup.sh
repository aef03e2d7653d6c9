#!/usr/bin/env bash
# Measures how long an ftmpi job takes to start across two simulated hosts, and what its wire-up costs:
# the figures of issue 20 (start-up for 2, 8, 32 and 64 ranks; bytes per rank of the address exchange).
#
#   scripts/bench-startup.sh [--rounds R] [--ranks "2 8 32 64"] [--build-dir D] [--install DIR]...
#
# Needs root (tests/netns/simhosts.sh). ftrun runs on host ftA; half the ranks run there, half on ftB
# (started through simhosts.sh's ssh-like agent; a wrapper counts its invocations). For each rank count,
# R rounds (default 3; rank counts interleaved within a round), bench/mpi/mpi_startup.c as the program,
# FTMPI_BASE_LOG_LEVEL=info so that ftrun reports what its control channel carried. Printed per rank count
# (medians): time from ftrun's start until every rank has returned from MPI_Init, until the first
# barrier is done, and until ftrun exits; the launch agent's invocations; connections to ftrun; the
# control channel's frames and bytes per rank, each way.
# --install DIR (repeatable) measures an ftmpi installed in DIR (bin/ftrun, bin/ftcc) instead of building
# this checkout (Release, into D/install, default D = build/release); several --install give one table
# per installation, their rounds interleaved, so two revisions compare side by side.
# Raw outputs stay in D/bench-startup/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

rounds=3
counts="2 8 32 64"
build=${BUILD_DIR:-build/release}
installs=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --ranks) counts=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --install) installs+=("$(cd "$2" && pwd)"); shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-startup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $rounds in '' | *[!0-9]* | 0) echo "bench-startup.sh: --rounds needs a positive integer" >&2; exit 2 ;; esac
for n in $counts; do
  case $n in '' | *[!0-9]* | 0 | 1) echo "bench-startup.sh: --ranks needs even counts of 2 or more (got '$n')" >&2; exit 2 ;; esac
  [ $((n % 2)) -eq 0 ] || { echo "bench-startup.sh: --ranks needs even counts (got $n)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench-startup.sh: the simulated hosts need root" >&2; exit 2; }

work=$(mkdir -p "$build" && cd "$build" && pwd)/bench-startup
rm -rf "$work"
mkdir -p "$work/raw"
if [ ${#installs[@]} -eq 0 ]; then
  ./scripts/install-deps.sh >&2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFTMPI_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" >&2
  cmake --install "$build" --prefix "$(cd "$build" && pwd)/install" >/dev/null
  installs=("$(cd "$build" && pwd)/install")
fi
for i in "${!installs[@]}"; do
  "${installs[$i]}/bin/ftcc" -O2 -std=c11 "$root/bench/mpi/mpi_startup.c" -o "$work/startup-$i"
done

simhosts=$root/tests/netns/simhosts.sh
# The launch agent: simhosts.sh's, logging each invocation (one line per call) first.
cat >"$work/agent" <<EOF
#!/bin/sh
echo "\$1" >>"\$AGENT_LOG"
exec "$simhosts" agent "\$@"
EOF
chmod +x "$work/agent"

cat >"$work/rounds.sh" <<EOF
set -euo pipefail
for round in \$(seq 1 $rounds); do
  for i in ${!installs[*]}; do
    installs=(${installs[*]})
    for n in $counts; do
      half=\$((n / 2))
      out=$work/raw/\$i-\$n-\$round
      : >"\$out.agent"
      start=\$(date +%s%N)
      AGENT_LOG=\$out.agent FTMPI_BASE_LOG_LEVEL=info "$simhosts" exec ftA "\${installs[\$i]}/bin/ftrun" -n "\$n" \\
        --host "ftA:\$half,ftB:\$half" --launch-agent "$work/agent" --timeout 600 "$work/startup-\$i" \\
        >"\$out.out" 2>"\$out.err"
      end=\$(date +%s%N)
      echo "start_ns \$start end_ns \$end" >>"\$out.out"
      echo "round \$round: \$(basename "\${installs[\$i]%/install}") \$n ranks done" >&2
    done
  done
done
EOF
"$simhosts" session bash "$work/rounds.sh" >&2

python3 - "$work" "$rounds" "$counts" "${installs[@]}" <<'EOF'
import os, re, statistics, sys
work, rounds, counts = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3].split()]
installs = sys.argv[4:]
def med(xs): return statistics.median(xs) if xs else float('nan')
print(f"ftmpi start-up over 2 simulated hosts (ftrun on ftA, half the ranks on each host), medians of {rounds} rounds\n")
for i, inst in enumerate(installs):
    print(f"installation: {inst}\n")
    print("| ranks | MPI_Init done (ms) | first barrier done (ms) | ftrun exited (ms) | launch agents | connections to ftrun | frames per rank (in/out) | bytes per rank from ranks | bytes per rank to ranks |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for n in counts:
        init, barrier, total, agents, conns, fin, fout, bin_, bout = ([] for _ in range(9))
        for r in range(1, rounds + 1):
            base = os.path.join(work, "raw", f"{i}-{n}-{r}")
            text = open(base + ".out").read()
            m = re.search(r"init_done_ns (\d+) barrier_done_ns (\d+) ranks (\d+)", text)
            t = re.search(r"start_ns (\d+) end_ns (\d+)", text)
            if not m or not t or int(m.group(3)) != n:
                sys.exit(f"bench-startup.sh: round {r} of {n} ranks failed: see {base}.out and {base}.err")
            start = int(t.group(1))
            init.append((int(m.group(1)) - start) / 1e6)
            barrier.append((int(m.group(2)) - start) / 1e6)
            total.append((int(t.group(2)) - start) / 1e6)
            agents.append(len(open(base + ".agent").read().splitlines()))
            # An ftrun from before this measurement existed says nothing: its columns show "-".
            # Connections to ftrun: its own host's ranks and one link per host agent (which relays its ranks').
            c = re.search(r"control channel: (\d+) rank connections \((\d+) relayed by (\d+) host agents\); from ranks (\d+) frames, (\d+) bytes; to ranks (\d+) frames, (\d+) bytes", open(base + ".err").read())
            if c:
                conns.append(int(c.group(1)) - int(c.group(2)) + int(c.group(3)))
                fin.append(int(c.group(4)) / n); bin_.append(int(c.group(5)) / n)
                fout.append(int(c.group(6)) / n); bout.append(int(c.group(7)) / n)
        def f(xs): return f"{med(xs):.0f}" if xs else "-"
        print(f"| {n} | {f(init)} | {f(barrier)} | {f(total)} | {f(agents)} | {f(conns)} "
              f"| {f(fin)} / {f(fout)} | {f(bin_)} | {f(bout)} |")
    print()
EOF
