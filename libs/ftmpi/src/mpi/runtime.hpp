// The state of the MPI library in this process: where it is in its life, the engine, the
// communicators, the thread level, the bsend buffer and the requests.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>

#include "engine/engine.hpp"
#include "ftmpi/base/params.hpp"
#include "mpi/bsend.hpp"
#include "mpi/comm.hpp"
#include "mpi/request.hpp"

namespace ftmpi::mpi {

enum class Phase : std::uint8_t { before_init, running, finalized };

struct Runtime {
  Phase phase = Phase::before_init;
  base::ParamSet params;  // outlives the engine that was started with it
  std::unique_ptr<engine::Engine> engine;
  std::array<Comm, 2> comms;  // MPI_COMM_WORLD, MPI_COMM_SELF: indexed by their handles
  int thread_level = MPI_THREAD_SINGLE;
  std::thread::id main_thread;
  BsendBuffer bsend;
  RequestPool requests;

  Comm& world() noexcept { return comms[0]; }
};

// The process's runtime. Never destroyed: MPI calls stay well-defined (and leak checkers quiet) in
// atexit handlers and static destructors of the application.
Runtime& runtime() noexcept;
// The engine; only while running.
inline engine::Engine& engine() noexcept { return *runtime().engine; }
// The communicator a handle names, or null.
Comm* find_comm(MPI_Comm handle) noexcept;

// Prints "ftmpi: rank R: <what>" on stderr ("ftmpi: <what>" when MPI is not running) and ends the job
// with `code`: through the engine while it runs (the launcher gets `what` as the reason and names the
// rank itself), otherwise by aborting this process.
[[noreturn]] void fatal(int code, std::string_view what) noexcept;
// Ends the process unless MPI is running: calls before MPI_Init or after MPI_Finalize have no error
// handler to report through.
void require_running(std::string_view call) noexcept;

}  // namespace ftmpi::mpi
