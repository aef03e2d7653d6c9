#!/usr/bin/env bash
# Installs what is missing (also Open MPI and MPICH, which ftbench's comparison tests run), builds everything with AddressSanitizer + UBSan and -Werror, runs every test,
# then builds what the progress-thread and MPI_THREAD_MULTIPLE tests need with ThreadSanitizer (TSan and ASan do not mix) and runs
# those again under it: a data race reported there fails the run (TSan's exit status 66).
# Then every libFuzzer target of tests/fuzz runs for FTMPI_FUZZ_SECONDS (default 10) each, from its
# committed corpus (which the ASan suite also replays): a crash fails the run and leaves its input in
# build/fuzz/<target>-artifacts/.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` for the quick unit tests alone (no TSan, no
# fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/install-peers.sh  # Open MPI and MPICH: ftbench --against is tested beside them
build=${BUILD_DIR:-build/asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFTMPI_SANITIZE=ON -DFTMPI_WERROR=ON \
      -DFTMPI_BUILD_BENCH=OFF
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
[ "$#" -eq 0 ] || exit 0
tsan=${TSAN_BUILD_DIR:-build/tsan}
cmake -S . -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFTMPI_WERROR=ON -DFTMPI_BUILD_BENCH=OFF \
      -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
cmake --build "$tsan" --target ftrun mpi_pingpong mpi_ring mpi_collectives mpi_threads mpi_threads_overlap mpi_threads_poll mpi_grequest mpi_comm_idup_group mpi_cxx_program mpi_rma_ops mpi_threads_rma mpi_single_copy_window
ctest --test-dir "$tsan" --output-on-failure -j "$(nproc)" -R "progress_thread|mpi_threads|mpi_grequest|mpi_comm_idup_group_[1-4]$|mpi_cxx_program_3"
for target in wire json control engine fault_spec rte_frames; do
  ./scripts/fuzz.sh --target "$target" "${FTMPI_FUZZ_SECONDS:-10}"
done
