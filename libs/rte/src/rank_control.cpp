#include "rank_control.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <utility>

#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

// This process's command line, space-separated, for the job record.
std::string own_command() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

}  // namespace

Result<std::unique_ptr<RankControl>> RankControl::start(const JobInfo& job, std::string host) {
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(job.identity.job_id));
  JobRecord record;
  record.id = id;
  record.pid = ::getpid();
  record.command = own_command();
  record.started = static_cast<std::int64_t>(std::time(nullptr));
  record.ranks = job.size;
  record.hosts = {host};
  record.served_rank = job.rank;
  std::vector<std::string> rank_hosts(job.size);
  rank_hosts[job.rank] = std::move(host);
  auto service = ControlService::open(std::move(record), std::move(rank_hosts),
                                      std::string(id) + ".rank" + std::to_string(job.rank));
  if (!service) return service.status();
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return sys::errno_status(Errc::internal, "eventfd");
  std::unique_ptr<RankControl> control(new RankControl(std::move(*service), job.rank, job.size, std::move(wake)));
  RankControl* self = control.get();
  control->thread_ = std::thread([self] { self->run(); });
  return control;
}

RankControl::RankControl(std::unique_ptr<ControlService> service, std::uint32_t rank, std::uint32_t size,
                         UniqueFd wake)
    : service_(std::move(service)), rank_(rank), size_(size), wake_(std::move(wake)) {}

RankControl::~RankControl() {
  stopping_.store(true);
  wake();
  if (thread_.joinable()) thread_.join();
}

std::vector<Control> RankControl::take() {
  std::lock_guard lock(mutex_);
  pending_.store(false);
  return std::exchange(requests_, {});
}

void RankControl::reply(std::uint32_t id, bool ok, std::string text) {
  {
    std::lock_guard lock(mutex_);
    replies_.push_back(ControlReply{id, ok, std::move(text)});
  }
  wake();
}

void RankControl::wake() {
  const std::uint64_t one = 1;
  if (::write(wake_.get(), &one, sizeof one) < 0) {
    // Fails only when the counter is full: the thread is being woken already.
  }
}

bool RankControl::send_control(std::uint32_t rank, std::uint32_t id, std::string_view line) {
  if (rank != rank_) return false;
  std::lock_guard lock(mutex_);
  requests_.push_back(Control{id, std::string(line)});
  pending_.store(true);
  return true;
}

std::string RankControl::why_not_asked(std::uint32_t rank) const {
  (void)rank;
  return "not served here: started without ftrun, each rank serves its own socket on its host (run the "
         "tool there)";
}

void RankControl::run() {
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
    Clock::time_point deadline = Clock::time_point::max();
    service_->prepare_poll(fds, deadline);
    if (::poll(fds.data(), fds.size(), sys::poll_timeout_ms(deadline, Clock::now())) < 0 && errno != EINTR) return;
    if (stopping_.load()) return;
    const auto now = Clock::now();
    if ((fds[0].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      if (::read(wake_.get(), &count, sizeof count) < 0) {
        // EAGAIN: another wake-up took it; the replies are read below either way.
      }
      std::vector<ControlReply> replies;
      {
        std::lock_guard lock(mutex_);
        replies.swap(replies_);
      }
      for (ControlReply& r : replies) {
        RankEvent event;
        event.kind = RankEvent::Kind::control_reply;
        event.rank = rank_;
        event.control_id = r.id;
        event.ok = r.ok;
        event.message = std::move(r.text);
        service_->on_reply(event, now);
      }
    }
    service_->dispatch(std::span<const pollfd>(fds).subspan(1), now, *this);
  }
}

}  // namespace ftmpi::rte
