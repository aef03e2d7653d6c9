#!/usr/bin/env bash
# The main job: installs what is missing (ftmpi's build dependencies, and Open MPI and MPICH to compare
# with), builds ftmpi (Release), and runs `ftbench table --against openmpi,mpich`: a small MPI job under
# ftrun per path and rail (shared memory; UDP on each loopback rail and striped over both), with
# reliability off and on under each checksum, latency and bandwidth beside Open MPI and MPICH measured in
# interleaved rounds (docs/ftbench.md). Prints a Markdown table; arguments go to ftbench (--json, --rounds
# R, --scale X, ...). Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh >&2
./scripts/install-peers.sh >&2
build=${BUILD_DIR:-build/release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target ftbench ftbench-mpi ftrun >&2
exec "$build/tools/ftbench" table --against openmpi,mpich "$@"
