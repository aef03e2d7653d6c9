// A rank that serves the control plane itself, where no ftrun does (ranks started by srun): a
// ControlService on <runtime dir>/<job id>.rank<R>.sock, with the record beside it, run by a thread of
// its own whose only target is this rank. Tools on the rank's host find the job's ranks there and merge
// their answers (control.hpp: list_jobs, ask_job).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control_service.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/protocol.hpp"

namespace ftmpi::rte {

class RankControl final : private ControlTargets {
 public:
  // Opens the socket and record for rank `job.rank` and starts the thread. `host` names this host in
  // answers.
  static base::Result<std::unique_ptr<RankControl>> start(const JobInfo& job, std::string host);
  // Stops the thread; the socket and record are removed.
  ~RankControl() override;
  RankControl(const RankControl&) = delete;
  RankControl& operator=(const RankControl&) = delete;

  // Raised when a request arrived; take() lowers it. The engine's progress loop tests it.
  const std::atomic<bool>* pending() const noexcept { return &pending_; }
  std::vector<Control> take();
  // The engine's answer to request `id`, handed to the thread, which writes it to the tool.
  void reply(std::uint32_t id, bool ok, std::string text);

 private:
  RankControl(std::unique_ptr<ControlService> service, std::uint32_t rank, std::uint32_t size, UniqueFd wake);

  // ControlTargets, called on the thread: this rank alone is reached here.
  std::uint32_t size() const noexcept override { return size_; }
  bool send_control(std::uint32_t rank, std::uint32_t id, std::string_view line) override;
  std::string why_not_asked(std::uint32_t rank) const override;

  void run();
  void wake();

  std::unique_ptr<ControlService> service_;  // used by the thread only
  std::uint32_t rank_;
  std::uint32_t size_;
  UniqueFd wake_;  // an eventfd: replies to hand over, or stop
  std::mutex mutex_;
  std::vector<Control> requests_;       // to the engine
  std::vector<ControlReply> replies_;   // from the engine
  std::atomic<bool> pending_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ftmpi::rte
