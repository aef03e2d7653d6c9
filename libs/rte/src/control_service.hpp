// ftrun's side of the control plane (control.hpp): the job's Unix socket and record in the runtime
// directory, tools' requests fanned out to the ranks through the Server, and their answers gathered.
// Part of ftrun's single poll() loop, like the Server: prepare_poll(), then dispatch().
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/control.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/server.hpp"

namespace ftmpi::rte {

class ControlService {
 public:
  // Creates the runtime directory if needed (0700; an existing one must be this user's and not open to
  // others), listens on <dir>/<id>.sock (0600) and writes <dir>/<id>.json. `hosts` holds each rank's host.
  static base::Result<std::unique_ptr<ControlService>> open(JobRecord record, std::vector<std::string> rank_hosts);
  ~ControlService();
  ControlService(const ControlService&) = delete;
  ControlService& operator=(const ControlService&) = delete;

  const JobRecord& record() const noexcept { return record_; }

  void prepare_poll(std::vector<pollfd>& fds, Clock::time_point& deadline);
  // Handles the descriptors prepare_poll appended and expired requests; sends requests to ranks
  // through `server`.
  void dispatch(std::span<const pollfd> fds, Clock::time_point now, Server& server);
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
  void read_from(Tool& tool, Clock::time_point now, Server& server);
  void start(Tool& tool, Clock::time_point now, Server& server);
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
