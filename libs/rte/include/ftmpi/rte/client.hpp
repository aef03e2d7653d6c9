// The rank's side of the control protocol: wire-up through ftrun's key-value exchange, abort, finalize.
//
// Calls block (wire-up happens once, at init), but never spin: waiting is done in poll().
// Values published with put() become visible to every rank, the publisher included, after the next
// fence() that all ranks complete. A singleton (started without ftrun) behaves the same with one rank.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/bootstrap.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/params.hpp"
#include "ftmpi/rte/protocol.hpp"

namespace ftmpi::rte {

struct ClientOptions {
  // The whole of connecting and authenticating, over every address tried.
  std::chrono::nanoseconds connect_timeout = base::parse_duration(kConnectTimeout.default_value).value();
  // How long one of ftrun's addresses may take to accept before the next is tried: an address a rank
  // cannot reach (a rail that is down, a firewall that drops) must not use up connect_timeout.
  std::chrono::nanoseconds attempt_timeout = std::chrono::seconds(2);

  // Reads rte's rows (kConnectTimeout) from a parameter set that has rte_params() added.
  static ClientOptions from(const base::ParamSet& params);
};

class Client final : public Bootstrap {
 public:
  // Connects as the environment says (variables in job.hpp), or makes a singleton if FTMPI_RANK is unset.
  static base::Result<Client> from_environment(char** envp, const ClientOptions& options);
  // Connects to the launcher named in `job` and authenticates as job.rank. job.launcher_address is a
  // list (job.hpp): each address is tried in order for up to attempt_timeout, in rounds, until one
  // accepts or connect_timeout has passed; the first that accepts is the one authenticated with.
  static base::Result<Client> connect(const JobInfo& job, const ClientOptions& options);
  // Rank 0 of 1 with no launcher.
  static base::Result<Client> singleton();

  std::string_view launcher_name() const noexcept override { return is_singleton() ? "nobody" : "ftrun"; }
  const JobInfo& job() const noexcept override { return job_; }
  std::uint32_t rank() const noexcept { return job_.rank; }
  std::uint32_t size() const noexcept { return job_.size; }
  bool is_singleton() const noexcept override { return job_.launcher_address.empty(); }

  // Publishes a value under `key` (replacing this rank's earlier value, if any) for the next fence.
  base::Status put(std::string_view key, std::string_view value) override;
  // Waits until every rank has entered the fence; then get() sees everything put before it.
  base::Status fence() override;
  // The same fence in two halves, for a caller that must keep working while it waits (the engine at
  // finalize answers its peers meanwhile): fence_begin() enters it, fence_test() looks without waiting
  // and is true once it completed. No put() and no other fence in between.
  base::Status fence_begin() override;
  base::Result<bool> fence_test() override;
  // A value `rank` put before the last completed fence.
  base::Result<std::string> get(std::uint32_t rank, std::string_view key) const override;
  // Tells ftrun (which then terminates the job, reporting `code` and `message`) and exits the process
  // with `code`'s low 8 bits, or 1 if those are 0 (an aborted job never reports success).
  [[noreturn]] void abort(int code, std::string_view message) override;
  // Tells ftrun this rank has finished cleanly; afterwards only the destructor may be called.
  base::Status finalize() override;

  // Control requests from ftrun (tools such as ftpath) received so far, without waiting: the engine
  // calls this from its progress loop and answers each with reply_control(). None for a singleton or
  // after finalize.
  std::vector<Control> take_control() override;
  // Starts a thread that sleeps in poll() on the connection to ftrun and raises control_pending() when
  // something arrives: the progress loop then tests one flag instead of making a system call, and a
  // rank answers at its next MPI call, however rarely it makes one. take_control() lowers the flag.
  base::Status watch_control() override;
  // Raised by the watcher (false without one). Valid as long as the Client.
  const std::atomic<bool>* control_pending() const noexcept override;
  // Answers request `id`: `text` is JSON when ok, else one line saying why not.
  base::Status reply_control(std::uint32_t id, bool ok, std::string text) override;

  // Asks ftrun whether `peer` polls (protocol.hpp, peer_check); the answer arrives like a control
  // request (control_pending() rises) and is taken with take_peer_statuses(). False for a singleton or
  // after finalize: nobody to ask.
  bool check_peer(std::uint32_t peer) override;
  std::vector<PeerStatus> take_peer_statuses() override;

 private:
  Client(JobInfo job, UniqueFd socket, std::chrono::nanoseconds timeout)
      : job_(std::move(job)), socket_(std::move(socket)), timeout_(timeout) {}
  // Checks ftrun's answer to this rank's hello: a welcome to a job of this size.
  base::Status welcomed(const Message& reply);

  base::Status send(const Message& message);
  // Waits for the next message from ftrun until `deadline` (Clock::time_point::max(): forever).
  base::Result<Message> receive(std::chrono::steady_clock::time_point deadline);
  // The same, but nothing by `deadline` is std::nullopt, not an error: with `deadline` now, it only looks.
  base::Result<std::optional<Message>> try_receive(std::chrono::steady_clock::time_point deadline);
  // Takes fence_done for the fence begun: merges its entries into the table.
  base::Status complete_fence(Message reply);
  base::Status usable(std::string_view operation) const;

  JobInfo job_;
  UniqueFd socket_;  // closed for a singleton, and after finalize
  std::chrono::nanoseconds timeout_;
  FrameReader reader_{kLauncherToRank};
  std::uint32_t fences_ = 0;    // completed
  bool fence_pending_ = false;  // begun, not completed
  std::size_t kv_bytes_ = 0;
  bool finalized_ = false;
  std::vector<Control> controls_;  // received, not yet taken
  std::vector<PeerStatus> peer_statuses_;  // received, not yet taken
  std::optional<Message> held_;    // received by take_control(), returned by the next receive
  struct ControlWatcher;
  // On the heap: its thread holds its address while the Client moves. Stopped before the socket closes.
  std::unique_ptr<ControlWatcher, void (*)(ControlWatcher*)> watcher_{nullptr, nullptr};
  void stop_watching();
  using KvMap = std::map<std::string, std::string, std::less<>>;
  std::map<std::string, std::size_t, std::less<>> published_;  // key -> value size, for the budget
  KvMap pending_;                                              // a singleton's puts since its last fence
  std::vector<KvMap> table_;                                   // per rank, as of the last completed fence
};

}  // namespace ftmpi::rte
