// The bench job's time limits: which jobs may wait for ever on a lost frame, and how long a healthy run
// of a set of kernels may take.
#include "ftmpi/bench/job.hpp"

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace ftmpi::bench;

namespace {

// FTMPI_ENGINE_RELIABILITY unset for the test's length, as it was before.
struct NoReliabilityEnv {
  NoReliabilityEnv() {
    if (const char* v = std::getenv(kName)) saved = v;
    ::unsetenv(kName);
  }
  ~NoReliabilityEnv() {
    if (saved) ::setenv(kName, saved->c_str(), 1);
  }
  static constexpr const char* kName = "FTMPI_ENGINE_RELIABILITY";
  std::optional<std::string> saved;
};

JobSpec job(const std::string& paths, std::vector<std::string> params, const std::string& hosts = "") {
  JobSpec j;
  j.paths = paths;
  j.params = std::move(params);
  j.hosts = hosts;
  return j;
}

}  // namespace

BOOST_AUTO_TEST_CASE(only_reliability_off_on_a_network_path_may_lose_frames) {
  const NoReliabilityEnv env;
  BOOST_TEST(may_lose_frames(job("udp", {"engine.reliability=off"})));
  BOOST_TEST(may_lose_frames(job("shm,udp", {"engine.reliability=off"})));
  BOOST_TEST(may_lose_frames(job("", {"engine.reliability=off"}, "a,b")));  // ranks on other hosts
  BOOST_TEST(!may_lose_frames(job("shm", {"engine.reliability=off"})));
  BOOST_TEST(!may_lose_frames(job("", {"engine.reliability=off"})));  // two ranks here: shared memory
  BOOST_TEST(!may_lose_frames(job("udp", {})));
  BOOST_TEST(!may_lose_frames(job("udp", {"engine.reliability=auto"})));
  // The last one given counts, as in ftrun.
  BOOST_TEST(!may_lose_frames(job("udp", {"engine.reliability=off", "engine.reliability=force"})));
  BOOST_TEST(may_lose_frames(job("udp", {"engine.reliability=force", "engine.checksum=none", "engine.reliability=off"})));
  // Without --paths, a path.kinds parameter says the paths (an ftbench --variant's, say); with it, --paths
  // wins, as in ftrun.
  BOOST_TEST(may_lose_frames(job("", {"path.kinds=udp", "engine.reliability=off"})));
  BOOST_TEST(may_lose_frames(job("", {"path.kinds=shm", "path.kinds=shm,udp", "engine.reliability=off"})));
  BOOST_TEST(!may_lose_frames(job("", {"path.kinds=shm", "engine.reliability=off"})));
  BOOST_TEST(!may_lose_frames(job("shm", {"path.kinds=udp", "engine.reliability=off"})));
  BOOST_TEST(!may_lose_frames(job("", {"path.kinds.x=udp", "engine.reliability=off"})));  // not that name
}

BOOST_AUTO_TEST_CASE(the_environment_turns_reliability_off_unless_a_parameter_says_otherwise) {
  const NoReliabilityEnv env;
  ::setenv(NoReliabilityEnv::kName, "off", 1);
  BOOST_TEST(may_lose_frames(job("udp", {})));
  BOOST_TEST(!may_lose_frames(job("udp", {"engine.reliability=auto"})));
}

BOOST_AUTO_TEST_CASE(a_time_limit_grows_with_the_figures_their_repetitions_and_max_time) {
  KernelArgs k;
  k.kernels = "lat";
  k.sizes = "0";
  k.reps = 1;
  k.max_time = 0.2;
  BOOST_TEST(k.time_limit_s() == 31);  // 30 + 2 x 1 figure x (1 + 1) x 0.2, rounded up
  k.kernels = "lat,bw";
  k.sizes = "0,8k,1m";
  k.reps = 5;
  k.max_time = 1;
  BOOST_TEST(k.time_limit_s() == 30 + 2 * 6 * 6);
  k.sizes = "0:4m";  // 0, then 1, 2, 4 ... 4 MiB: 24 sizes
  BOOST_TEST(k.time_limit_s() == 30 + 2 * 48 * 6);
  k.sizes = "1k:4k";  // 1, 2 and 4 KiB
  BOOST_TEST(k.time_limit_s() == 30 + 2 * 6 * 6);
  k.max_time = 0;  // no bound on a repetition: none on the job
  BOOST_TEST(k.time_limit_s() == 0);
}

BOOST_AUTO_TEST_CASE(a_job_gets_the_limit_asked_for_else_one_only_where_it_may_lose_frames) {
  const NoReliabilityEnv env;
  BOOST_TEST(job_time_limit(job("udp", {"engine.reliability=off"}), 0, 42) == 42);
  BOOST_TEST(job_time_limit(job("udp", {}), 0, 42) == 0);
  BOOST_TEST(job_time_limit(job("udp", {}), 7, 42) == 7);  // --time-limit: any job
  BOOST_TEST(job_time_limit(job("udp", {"engine.reliability=off"}), 7, 42) == 7);
}
