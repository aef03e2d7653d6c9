// Ranks that serve the control plane themselves (rank_control.hpp, as under srun): their records are
// listed as one job, and a request through ask_job reaches each and comes back as one answer.
#include "rank_control.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/rte/control.hpp"

using namespace ftmpi::rte;

namespace {

// XDG_RUNTIME_DIR pointed at a fresh directory for the test's life: the records land there alone.
struct PrivateRuntimeDirectory {
  std::string saved;
  bool had = false;
  std::string dir;
  PrivateRuntimeDirectory() {
    if (const char* old = std::getenv("XDG_RUNTIME_DIR")) {
      saved = old;
      had = true;
    }
    char name[] = "/tmp/ftmpi-rank-control-XXXXXX";
    dir = ::mkdtemp(name);
    ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  ~PrivateRuntimeDirectory() {
    if (had) {
      ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
    } else {
      ::unsetenv("XDG_RUNTIME_DIR");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// A rank's engine, as far as control goes: takes each request as it arrives and answers {"rank": R}.
struct AnsweringRank {
  std::unique_ptr<RankControl> control;
  std::atomic<bool> stop{false};
  std::thread thread;

  AnsweringRank(const JobInfo& job) {
    auto started = RankControl::start(job, "node" + std::to_string(job.rank));
    BOOST_TEST_REQUIRE(started.is_ok(), started.status().to_string());
    control = std::move(*started);
    thread = std::thread([this, rank = job.rank] {
      while (!stop.load()) {
        if (control->pending()->load()) {
          for (const Control& c : control->take()) control->reply(c.id, true, "{\"rank\": " + std::to_string(rank) + "}");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the engine's progress loop, slowed
      }
    });
  }
  ~AnsweringRank() {
    stop.store(true);
    thread.join();
  }
};

JobInfo job_of(std::uint32_t rank, std::uint32_t size, const JobIdentity& identity) {
  JobInfo job;
  job.rank = rank;
  job.size = size;
  job.identity = identity;
  return job;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rank_control)

BOOST_AUTO_TEST_CASE(ranks_serving_themselves_are_one_job_and_answer_as_one) {
  PrivateRuntimeDirectory runtime;
  const JobIdentity identity = *make_job_identity();
  // Ranks 0 and 1 of 3 on this host; rank 2 is elsewhere.
  auto rank0 = std::make_unique<AnsweringRank>(job_of(0, 3, identity));
  auto rank1 = std::make_unique<AnsweringRank>(job_of(1, 3, identity));

  auto job = find_job("");
  BOOST_TEST_REQUIRE(job.is_ok(), job.status().to_string());
  BOOST_TEST(job->ranks == 3u);
  BOOST_TEST(job->rank_sockets.size() == 2u);
  BOOST_TEST((job->hosts == std::vector<std::string>{"node0", "node1"}));

  ControlRequest ping;
  ping.op = ControlOp::ping;
  auto answer = ask_job(*job, ping);
  BOOST_TEST_REQUIRE(answer.is_ok(), answer.status().to_string());
  const auto& ranks = answer->reply["ranks"].items();
  BOOST_TEST_REQUIRE(ranks.size() == 2u);
  for (std::uint64_t r = 0; r < 2; ++r) {
    BOOST_TEST(ranks[r]["rank"].as_u64() == r);
    BOOST_TEST(ranks[r]["ok"].as_bool());
    BOOST_TEST(ranks[r]["reply"]["rank"].as_u64() == r);
    BOOST_TEST(ranks[r]["host"].as_string() == "node" + std::to_string(r));
  }
  // Rank 2 serves its own socket on its own host: missing here, saying where to ask.
  const auto& missing = answer->reply["missing"].items();
  BOOST_TEST_REQUIRE(missing.size() == 1u);
  BOOST_TEST(missing[0]["rank"].as_u64() == 2u);
  BOOST_TEST(missing[0]["why"].as_string().find("its own socket on its host") != std::string::npos);
  BOOST_TEST(answer->missing);
  BOOST_TEST(!answer->refused);
  BOOST_TEST(!answer->reply["ok"].as_bool());

  // Only rank 1 asked: rank 0's socket says it was not asked, rank 1's answers.
  ping.ranks = {1};
  answer = ask_job(*job, ping);
  BOOST_TEST_REQUIRE(answer.is_ok(), answer.status().to_string());
  BOOST_TEST(answer->reply["ranks"].items().size() == 1u);
  BOOST_TEST(answer->reply["missing"].items().empty());
  BOOST_TEST(answer->reply["ok"].as_bool());

  // A rank that has finished takes its socket and record with it; then the job is gone.
  rank1.reset();
  job = find_job("");
  BOOST_TEST_REQUIRE(job.is_ok(), job.status().to_string());
  BOOST_TEST(job->rank_sockets.size() == 1u);
  rank0.reset();
  BOOST_TEST(!find_job("").is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
