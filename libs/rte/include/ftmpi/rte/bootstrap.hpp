// How a rank learns its job and meets the other ranks at start-up, whoever started it: ftrun (Client,
// client.hpp) or a PMIx server such as Slurm's srun --mpi=pmix (PmixBootstrap, pmix.hpp). The engine
// (libs/ftmpi/src/engine/start.cpp) sees only this interface, so one program binary runs under both.
//
// Values published with put() become visible to every rank, the publisher included, after the next
// fence() that all ranks complete; get() then reads them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/protocol.hpp"

namespace ftmpi::rte {

struct ClientOptions;

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // Who started this rank, for messages: "ftrun", "PMIx", "nobody" (a singleton).
  virtual std::string_view launcher_name() const noexcept = 0;
  virtual const JobInfo& job() const noexcept = 0;
  // Started by nobody: rank 0 of 1, no launcher to tell anything.
  virtual bool is_singleton() const noexcept = 0;

  // Publishes a value under `key` for the next fence.
  virtual base::Status put(std::string_view key, std::string_view value) = 0;
  // Waits until every rank has entered the fence; then get() sees everything put before it.
  virtual base::Status fence() = 0;
  // The same fence in two halves, for a caller that must keep working while it waits: fence_begin()
  // enters it, fence_test() looks without waiting and is true once it completed. No put() and no other
  // fence in between.
  virtual base::Status fence_begin() = 0;
  virtual base::Result<bool> fence_test() = 0;
  // A value `rank` put before the last completed fence.
  virtual base::Result<std::string> get(std::uint32_t rank, std::string_view key) const = 0;
  // Tells the launcher, which ends the job, and exits with `code`'s low 8 bits (1 if those are 0).
  [[noreturn]] virtual void abort(int code, std::string_view message) = 0;
  // Tells the launcher this rank has finished cleanly; afterwards only the destructor may be called.
  virtual base::Status finalize() = 0;

  // The control plane (control.hpp), where this launcher serves one: requests from tools arrive while
  // control_pending() is raised (null: never), are taken with take_control() and answered with
  // reply_control(). check_peer asks whether a silent peer still polls (false: nobody to ask); answers
  // arrive like control requests and are taken with take_peer_statuses().
  virtual base::Status watch_control() { return {}; }
  virtual const std::atomic<bool>* control_pending() const noexcept { return nullptr; }
  virtual std::vector<Control> take_control() { return {}; }
  virtual base::Status reply_control(std::uint32_t /*id*/, bool /*ok*/, std::string /*text*/) { return {}; }
  virtual bool check_peer(std::uint32_t /*peer*/) { return false; }
  virtual std::vector<PeerStatus> take_peer_statuses() { return {}; }
};

// Environment variables that say who started the process.
inline constexpr std::string_view kEnvPmixRank = "PMIX_RANK";
inline constexpr std::string_view kEnvPmixNamespace = "PMIX_NAMESPACE";
inline constexpr std::string_view kEnvSlurmProcId = "SLURM_PROCID";
inline constexpr std::string_view kEnvSlurmStepTasks = "SLURM_STEP_NUM_TASKS";
inline constexpr std::string_view kEnvSlurmTasks = "SLURM_NTASKS";

// Whether this library was built with PMIx (libpmix found at configure time).
bool pmix_supported() noexcept;

// The bootstrap the environment block `envp` (environ) calls for:
//   FTMPI_RANK set                      ftrun's Client (job.hpp's variables)
//   PMIX_RANK and PMIX_NAMESPACE set    PMIx (srun --mpi=pmix, or any PMIx server); an error naming the
//                                       cause when this library was built without PMIx
//   SLURM_PROCID set, srun started      an error saying how to launch: every task would otherwise be a
//   more than one task                  singleton, rank 0 of 1 (srun --mpi=none, or a Slurm default of none)
//   otherwise                           a singleton
base::Result<std::unique_ptr<Bootstrap>> bootstrap_from_environment(char** envp, const ClientOptions& options);

}  // namespace ftmpi::rte
