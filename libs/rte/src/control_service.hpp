// The serving side of the control plane (control.hpp): a Unix socket and record in the runtime
// directory, tools' requests fanned out to the ranks, and their answers gathered. ftrun serves its whole
// job so, reaching the ranks through its Server, in its single poll() loop (prepare_poll(), then
// dispatch()); under srun each rank serves itself the same way (rank_control.hpp).
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/control.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/server.hpp"

namespace ftmpi::rte {

// The ranks a ControlService passes requests to.
class ControlTargets {
 public:
  virtual ~ControlTargets() = default;
  virtual std::uint32_t size() const noexcept = 0;
  // Sends request `line` under `id` to `rank`; false when it cannot be asked, why_not_asked() says why.
  virtual bool send_control(std::uint32_t rank, std::uint32_t id, std::string_view line) = 0;
  virtual std::string why_not_asked(std::uint32_t rank) const = 0;
};

// ftrun's: every rank, over its connection to ftrun's Server.
class ServerTargets final : public ControlTargets {
 public:
  explicit ServerTargets(Server& server) : server_(server) {}
  std::uint32_t size() const noexcept override { return server_.size(); }
  bool send_control(std::uint32_t rank, std::uint32_t id, std::string_view line) override {
    return server_.send_control(rank, id, line);
  }
  std::string why_not_asked(std::uint32_t rank) const override {
    return server_.finalized(rank) ? "finalized" : server_.joined(rank) ? "disconnected" : "not connected yet";
  }

 private:
  Server& server_;
};

class ControlService {
 public:
  // Creates the runtime directory if needed (0700; an existing one must be this user's and not open to
  // others), listens on <dir>/<name>.sock (0600) and writes <dir>/<name>.json; `name` is the job's id
  // (ftrun) or <id>.rank<R> (one rank serving itself). `hosts` holds each rank's host.
  static base::Result<std::unique_ptr<ControlService>> open(JobRecord record, std::vector<std::string> rank_hosts,
                                                            std::string name = {});
  ~ControlService();
  ControlService(const ControlService&) = delete;
  ControlService& operator=(const ControlService&) = delete;

  const JobRecord& record() const noexcept { return record_; }

  void prepare_poll(std::vector<pollfd>& fds, Clock::time_point& deadline);
  // Handles the descriptors prepare_poll appended and expired requests; sends requests to `ranks`.
  void dispatch(std::span<const pollfd> fds, Clock::time_point now, ControlTargets& ranks);
  // A rank's answer (Server's control_reply event).
  void on_reply(const RankEvent& event, Clock::time_point now);

  std::uint64_t refused_peers() const noexcept { return refused_peers_; }

 private:
  struct Answer {
    bool ok = false;
    std::string text;
  };
  struct Tool {
    UniqueFd fd;
    std::string line;            // the request as read so far
    Clock::time_point deadline;  // for the whole line, then for the ranks' answers
    std::optional<ControlRequest> request;
    std::uint32_t id = 0;
    std::vector<std::uint32_t> asked;          // ranks the request went to
    std::map<std::uint32_t, std::string> not_asked;  // rank -> why not (not connected, finalized)
    std::map<std::uint32_t, Answer> answers;
    std::string out;  // the answer being written
    std::size_t out_offset = 0;
    bool done = false;
  };

  ControlService() = default;
  void accept_all(Clock::time_point now);
  void read_from(Tool& tool, Clock::time_point now, ControlTargets& ranks);
  void start(Tool& tool, Clock::time_point now, ControlTargets& ranks);
  void finish(Tool& tool);
  void write_to(Tool& tool);
  void fail(Tool& tool, const std::string& error);

  JobRecord record_;
  std::vector<std::string> rank_hosts_;
  std::string record_path_;
  UniqueFd listener_;
  std::vector<std::unique_ptr<Tool>> tools_;
  std::vector<Tool*> polled_;
  std::uint32_t next_id_ = 1;
  std::uint64_t refused_peers_ = 0;  // connections from another uid
};

}  // namespace ftmpi::rte
