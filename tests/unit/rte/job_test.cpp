#include "ftmpi/rte/job.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/rte/bootstrap.hpp"
#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/params.hpp"

using namespace ftmpi::rte;
using ftmpi::base::Errc;

namespace {

// An environment block (char**) owning its strings.
struct Env {
  explicit Env(std::vector<std::string> entries) : text(std::move(entries)) {
    for (std::string& e : text) ptrs.push_back(e.data());
    ptrs.push_back(nullptr);
  }
  char** get() { return ptrs.data(); }
  std::vector<std::string> text;
  std::vector<char*> ptrs;
};

JobInfo sample_job() {
  JobInfo job;
  job.rank = 2;
  job.size = 4;
  job.local_rank = 2;
  job.local_size = 4;
  job.identity = *make_job_identity();
  job.launcher_address = "127.0.0.1:4567";
  return job;
}

std::vector<std::string> without(std::vector<std::string> env, std::string_view name) {
  std::erase_if(env, [&](const std::string& e) { return e.starts_with(std::string(name) + "="); });
  return env;
}

std::vector<std::string> replaced(std::vector<std::string> env, std::string_view name,
                                  std::string_view value) {
  env = without(std::move(env), name);
  env.push_back(std::string(name) + "=" + std::string(value));
  return env;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(job)

BOOST_AUTO_TEST_CASE(environment_round_trips) {
  const JobInfo job = sample_job();
  std::vector<std::string> vars = job_environment(job);
  vars.push_back("HOME=/root");
  Env env(vars);
  auto parsed = job_from_environment(env.get());
  BOOST_REQUIRE(parsed.is_ok());
  BOOST_REQUIRE(parsed->has_value());
  const JobInfo& back = **parsed;
  BOOST_TEST(back.rank == 2u);
  BOOST_TEST(back.size == 4u);
  BOOST_TEST(back.local_rank == 2u);
  BOOST_TEST(back.local_size == 4u);
  BOOST_TEST(back.identity.job_id == job.identity.job_id);
  BOOST_TEST(back.identity.job_key == job.identity.job_key);
  BOOST_TEST(secrets_equal(back.identity.secret, job.identity.secret));
  BOOST_TEST(back.launcher_address == "127.0.0.1:4567");
}

BOOST_AUTO_TEST_CASE(no_rank_variable_means_a_singleton) {
  Env env({"HOME=/root", "FTMPI_SIZE=4"});
  auto parsed = job_from_environment(env.get());
  BOOST_REQUIRE(parsed.is_ok());
  BOOST_TEST(!parsed->has_value());
  auto single = singleton_job();
  BOOST_REQUIRE(single.is_ok());
  BOOST_TEST(single->rank == 0u);
  BOOST_TEST(single->size == 1u);
  BOOST_TEST(single->launcher_address.empty());
}

BOOST_AUTO_TEST_CASE(a_missing_variable_is_named_with_a_hint) {
  Env env(without(job_environment(sample_job()), kEnvRteAddr));
  auto parsed = job_from_environment(env.get());
  BOOST_TEST((parsed.code() == Errc::invalid_argument));
  BOOST_TEST(parsed.status().message().find("FTMPI_RTE_ADDR is not set") != std::string::npos);
  BOOST_TEST(parsed.status().message().find("ftrun") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(malformed_variables_are_refused_by_name) {
  const auto vars = job_environment(sample_job());
  const std::pair<std::string_view, std::string_view> bad[] = {
      {kEnvRank, "two"},
      {kEnvRank, "4"},
      {kEnvSize, "0"},
      {kEnvLocalRank, "9"},
      {kEnvJobId, "12"},
      {kEnvJobKey, "0000000000000000"},
      {kEnvRteAddr, "localhost"},
      {kEnvRteSecret, "abcd"},
      {kEnvRteSecret, std::string_view("zz000000000000000000000000000000"
                                       "00000000000000000000000000000000")},
  };
  for (const auto& [name, value] : bad) {
    BOOST_TEST_CONTEXT(name << "=" << value) {
      Env env(replaced(vars, name, value));
      auto parsed = job_from_environment(env.get());
      BOOST_TEST((parsed.code() == Errc::invalid_argument));
      BOOST_TEST(parsed.status().message().find(std::string(name)) != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(identities_are_random_and_keys_never_zero) {
  auto a = make_job_identity();
  auto b = make_job_identity();
  BOOST_REQUIRE(a.is_ok());
  BOOST_REQUIRE(b.is_ok());
  BOOST_TEST(a->job_key != 0u);
  BOOST_TEST(a->job_id != b->job_id);
  BOOST_TEST(!secrets_equal(a->secret, b->secret));
  BOOST_TEST(secrets_equal(a->secret, a->secret));
}

BOOST_AUTO_TEST_CASE(shm_prefix_names_the_job_in_hex) {
  BOOST_TEST(shm_prefix(0x1234abcdULL) == "ftmpi-000000001234abcd-");
}

BOOST_AUTO_TEST_CASE(remove_shared_memory_removes_only_that_jobs_segments) {
  const auto mine = make_job_identity()->job_id;
  const auto other = mine ^ 1;
  const std::string names[] = {shm_prefix(mine) + "fifo", shm_prefix(mine) + "overflow",
                               shm_prefix(other) + "fifo"};
  for (const std::string& name : names) {
    int fd = shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    BOOST_REQUIRE(fd >= 0);
    close(fd);
  }
  auto removed = remove_shared_memory(mine);
  BOOST_REQUIRE(removed.is_ok());
  BOOST_TEST(*removed == 2u);
  BOOST_TEST(access(("/dev/shm/" + names[0]).c_str(), F_OK) != 0);
  BOOST_TEST(access(("/dev/shm/" + names[2]).c_str(), F_OK) == 0);
  BOOST_TEST(*remove_shared_memory(other) == 1u);
}

BOOST_AUTO_TEST_CASE(rte_params_load_beside_the_contract_variables) {
  ftmpi::base::ParamSet params;
  BOOST_REQUIRE(params.add_table(ftmpi::base::base_params()).is_ok());
  BOOST_REQUIRE(params.add_table(rte_params()).is_ok());
  for (const auto& row : rte_params()) {
    const auto names = job_environment_names();
    const bool collides =
        std::find(names.begin(), names.end(), ftmpi::base::env_name(row.name)) != names.end();
    BOOST_TEST(!collides, row.name);
  }
  std::vector<std::string> vars = job_environment(sample_job());
  vars.push_back("FTMPI_RTE_KILL_GRACE=250ms");
  Env env(vars);
  BOOST_TEST(params.load_environment(env.get(), job_environment_names()).is_ok());
  BOOST_TEST((params.get_duration(kKillGrace) == std::chrono::milliseconds(250)));
}

// Which launcher the environment names (bootstrap_from_environment).

BOOST_AUTO_TEST_CASE(srun_without_pmix_of_several_tasks_is_refused_with_how_to_launch) {
  Env env({"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=4", "SLURM_NTASKS=4"});
  auto b = bootstrap_from_environment(env.get(), ClientOptions{});
  BOOST_REQUIRE(!b.is_ok());
  BOOST_TEST((b.code() == Errc::unsupported));
  BOOST_TEST(b.status().message().find("srun --mpi=pmix") != std::string::npos, b.status().message());
  BOOST_TEST(b.status().message().find("ftrun") != std::string::npos, b.status().message());
}

BOOST_AUTO_TEST_CASE(srun_without_pmix_of_one_task_is_a_singleton) {
  // One task is rank 0 of 1 whoever started it: nothing to find.
  Env env({"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1"});
  auto b = bootstrap_from_environment(env.get(), ClientOptions{});
  BOOST_REQUIRE(b.is_ok());
  BOOST_TEST((*b)->is_singleton());
  BOOST_TEST((*b)->job().size == 1u);
}

BOOST_AUTO_TEST_CASE(ftrun_inside_an_allocation_wins_over_slurm_variables) {
  // ftrun's variables come first: a rank ftrun started inside an srun step carries both. A malformed
  // FTMPI_SIZE then gives ftrun's error, not the srun one.
  Env env({"FTMPI_RANK=0", "FTMPI_SIZE=x", "SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=4"});
  auto b = bootstrap_from_environment(env.get(), ClientOptions{});
  BOOST_REQUIRE(!b.is_ok());
  BOOST_TEST(b.status().message().find("FTMPI_SIZE") != std::string::npos, b.status().message());
}

BOOST_AUTO_TEST_CASE(no_launcher_is_a_singleton) {
  Env env({"HOME=/"});
  auto b = bootstrap_from_environment(env.get(), ClientOptions{});
  BOOST_REQUIRE(b.is_ok());
  BOOST_TEST((*b)->is_singleton());
  BOOST_TEST(std::string((*b)->launcher_name()) == "nobody");
}

BOOST_AUTO_TEST_SUITE_END()
