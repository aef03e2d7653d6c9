// ftrun across two simulated hosts (tests/netns/simhosts.sh): ftrun runs inside ftA as the head node and
// starts ftB's ranks with `simhosts.sh agent`, which behaves like ssh; ftB's ranks reach ftrun over the
// management link. The same helper programs as launch_test.cpp check wire-up, exit statuses, aborts,
// output, stdin and signals across hosts, and that each simulated host is a host of its own (name,
// /dev/shm).
//
// Needs root and the hosts: CTest runs this binary under `simhosts.sh session`, which makes them, holds
// the harness's lock and removes them afterwards. Without either, it exits 77 (CTest: skipped) and says
// why.
#include <sys/prctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <iterator>
#include <regex>
#include <sstream>

#include "ftmpi/rte/job.hpp"
#include "launch_support.hpp"

using namespace ftmpi::launch_test;

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

const std::string kHostA = env_or("SIMHOSTS_A", "ftA");
const std::string kHostB = env_or("SIMHOSTS_B", "ftB");
const std::string kRun = env_or("SIMHOSTS_RUN", "/run/ftmpi-simhosts");

[[noreturn]] void skip(const std::string& why) {
  std::printf("SKIP: %s\n", why.c_str());
  std::fflush(stdout);
  std::_Exit(77);
}

struct SimulatedHosts {
  SimulatedHosts() {
    if (geteuid() != 0) skip("needs root to enter the simulated hosts");
    for (const std::string& host : {kHostA, kHostB}) {
      if (!fs::exists("/run/netns/" + host) || !fs::exists(kRun + "/" + host + "/mnt")) {
        skip("simulated host " + host +
             " is not up: run this test under `" SIMHOSTS " session` (CTest does)");
      }
    }
    // Ranks orphaned by a killed ftrun are re-parented to this process, which can then reap them.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SimulatedHosts);

// `argv` run inside a simulated host.
std::vector<std::string> in_host(const std::string& host, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {SIMHOSTS, "exec", host});
  return argv;
}

// ftrun inside ftA, starting remote ranks with the harness's agent.
std::vector<std::string> ftrun_in_a(std::vector<std::string> args) {
  args.insert(args.begin(), {FTRUN_PATH, "--launch-agent", std::string(SIMHOSTS) + " agent"});
  return in_host(kHostA, std::move(args));
}

Finished run_in_a(const TempDir& dir, std::vector<std::string> args,
                  std::optional<std::string> stdin_text = {}) {
  Process p(ftrun_in_a(std::move(args)), dir, std::move(stdin_text));
  return p.finish();
}

std::string hosts_2_2() { return kHostA + ":2," + kHostB + ":2"; }

std::string pid_of(const TempDir& dir, int rank) { return std::to_string(dir.rank_pids().at(rank)); }

// Each rank's parent pid, from the lines "parent RANK PPID" of a job's output.
std::map<int, pid_t> parents_of(const std::string& out) {
  std::map<int, pid_t> parents;
  for (const std::string& line : lines_of(out)) {
    std::istringstream words(line);
    std::string tag;
    int rank = 0;
    pid_t parent = 0;
    if (words >> tag >> rank >> parent && tag == "parent") parents[rank] = parent;
  }
  return parents;
}

// Names in a host's /dev/shm.
std::vector<std::string> shm_entries(const TempDir& dir, const std::string& host) {
  Process ls(in_host(host, {"ls", "-1", "/dev/shm"}), dir);
  Finished f = ls.finish();
  BOOST_REQUIRE(f.exit_code() == 0);
  return lines_of(f.out);
}

// Runs a harness command (a fault, or healing it) and requires it to succeed.
void harness(std::vector<std::string> args, const TempDir& dir) {
  args.insert(args.begin(), SIMHOSTS);
  Process p(std::move(args), dir);
  Finished f = p.finish();
  BOOST_REQUIRE_MESSAGE(f.exit_code() == 0, "simhosts.sh failed: " << f.err);
}

// Undoes every fault inside a host when the test ends, however it ends.
struct Healed {
  Healed(const TempDir& dir, std::string host) : dir_(dir), host_(std::move(host)) {}
  ~Healed() {
    Process p({SIMHOSTS, "heal", host_}, dir_);
    (void)p.finish();
  }
  const TempDir& dir_;
  std::string host_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(netns_launch)

BOOST_AUTO_TEST_CASE(ranks_on_both_hosts_exchange_keys_and_every_hosts_segments_are_removed) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "4", "--host", hosts_2_2(), helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
  const std::uint64_t job = expect_exchange_ok(f, 4);
  // Every rank made a segment on its own host; ftrun removed ftA's itself and ftB's through the agent.
  const std::string prefix = ftmpi::rte::shm_prefix(job);
  for (const std::string& host : {kHostA, kHostB}) {
    for (const std::string& name : shm_entries(dir, host)) {
      BOOST_TEST(!name.starts_with(prefix), name << " was left behind on " << host);
    }
  }
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(each_simulated_host_has_its_own_name_and_dev_shm) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "4", "--host", hosts_2_2(), "sh", "-c",
                              "echo $FTMPI_RANK $(hostname) $(stat -c %d /dev/shm) "
                              "$FTMPI_LOCAL_RANK/$FTMPI_LOCAL_SIZE"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 4u);
  std::vector<std::vector<std::string>> fields;
  for (const std::string& line : out) {
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words),
                               std::istream_iterator<std::string>()};
    BOOST_REQUIRE(w.size() == 4u);
    fields.push_back(w);
  }
  BOOST_TEST(fields[0][1] == kHostA);
  BOOST_TEST(fields[1][1] == kHostA);
  BOOST_TEST(fields[2][1] == kHostB);
  BOOST_TEST(fields[3][1] == kHostB);
  // One /dev/shm per host, shared by its ranks, and not this machine's.
  BOOST_TEST(fields[0][2] == fields[1][2]);
  BOOST_TEST(fields[2][2] == fields[3][2]);
  BOOST_TEST(fields[0][2] != fields[2][2]);
  struct stat root_shm {};
  BOOST_REQUIRE(stat("/dev/shm", &root_shm) == 0);
  BOOST_TEST(fields[0][2] != std::to_string(root_shm.st_dev));
  BOOST_TEST(fields[2][2] != std::to_string(root_shm.st_dev));
  BOOST_TEST((std::vector<std::string>{fields[0][3], fields[1][3], fields[2][3], fields[3][3]} ==
              std::vector<std::string>{"0/2", "1/2", "0/2", "1/2"}));
}

// ftrun listens only where its ranks and its agents reach it: ftA's management address (the route to ftB
// leaves there) and loopback, for its ranks on one port and for the agents on another; never every
// address, nor the rails. A rank on ftB reaches ftrun through its host's agent, on ftB's loopback.
BOOST_AUTO_TEST_CASE(ftrun_listens_only_on_the_addresses_its_ranks_reach_it_by) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "2", "--host", kHostA + ":1," + kHostB + ":1", "sh", "-c",
                              "echo addr $FTMPI_RANK $FTMPI_RTE_ADDR; "
                              "if [ \"$FTMPI_RANK\" = 0 ]; then ss -Hltn | awk '{print \"listen\", $4}'; fi"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  std::map<std::string, std::string> advertised;
  std::vector<std::string> listening;
  for (const std::string& line : lines_of(f.out)) {
    if (line.starts_with("addr ")) advertised[line.substr(5, 1)] = line.substr(7);
    if (line.starts_with("listen ")) listening.push_back(line.substr(7));
  }
  BOOST_REQUIRE(advertised.size() == 2u);
  const std::string port = advertised["0"].substr(advertised["0"].rfind(':'));
  BOOST_TEST(advertised["0"] == "10.77.0.1" + port + ",127.0.0.1" + port);
  BOOST_TEST(std::regex_match(advertised["1"], std::regex(R"(127\.0\.0\.1:\d+)")), advertised["1"]);
  // Every listener on ftA is ftrun's: its ranks' port and its agents' port, each on the two addresses.
  std::sort(listening.begin(), listening.end());
  BOOST_REQUIRE(listening.size() == 4u);
  std::vector<std::string> agent_port;
  for (const std::string& l : listening) {
    if (!l.ends_with(port)) agent_port.push_back(l);
  }
  BOOST_REQUIRE(agent_port.size() == 2u);
  const std::string other = agent_port[0].substr(agent_port[0].rfind(':'));
  std::vector<std::string> expected{"10.77.0.1" + other, "10.77.0.1" + port, "127.0.0.1" + other, "127.0.0.1" + port};
  std::sort(expected.begin(), expected.end());
  BOOST_TEST(listening == expected);
}

// ftrun starts one agent per other host, however many ranks it has: a launch agent that logs each of its
// invocations shows it.
BOOST_AUTO_TEST_CASE(one_agent_per_host_starts_all_of_its_ranks) {
  TempDir dir;
  const std::string log = (dir.path / "agent.log").string();
  const std::string wrapper = (dir.path / "logging_agent.sh").string();
  std::ofstream(wrapper) << "#!/bin/sh\necho \"$1\" >> " << log << "\nexec " << SIMHOSTS << " agent \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  for (const std::string& hosts : {kHostA + ":1," + kHostB + ":3", kHostA + ":4," + kHostB + ":4", kHostB + ":4"}) {
    fs::remove(log);
    Process p(in_host(kHostA, {FTRUN_PATH, "--launch-agent", wrapper, "--host", hosts, helper("kv_exchange")}), dir);
    Finished f = p.finish();
    describe(f);
    BOOST_TEST(f.exit_code() == 0, hosts);
    BOOST_TEST(f.err.empty());
    std::ifstream in(log);
    std::vector<std::string> calls;
    for (std::string line; std::getline(in, line);) calls.push_back(line);
    BOOST_TEST((calls == std::vector<std::string>{kHostB}), hosts);
  }
}

BOOST_AUTO_TEST_CASE(a_rank_exiting_5_on_the_other_host_ends_the_job_with_5) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "4", "--host", hosts_2_2(), helper("exit5_rank2")});
  describe(f);
  BOOST_TEST(f.exit_code() == 5);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 2 (pid " + pid_of(dir, 2) + " on " + kHostB +
                                       ") exited with status 5; terminating the job"}));
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(a_rank_killed_on_the_other_host_gives_128_plus_the_signal) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "3", "--host", kHostA + "," + kHostB + ":2", helper("kill_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGKILL);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 (pid " + pid_of(dir, 1) + " on " + kHostB +
                                       ") was killed by signal 9 (Killed); terminating the job"}));
  require_ranks_gone(dir, 3);
}

// Rank 1 makes a segment on ftB under the job's prefix, then is killed: ftB's agent removes it.
BOOST_AUTO_TEST_CASE(a_rank_killed_on_the_other_host_leaves_no_process_and_no_segment) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "3", "--host", kHostA + "," + kHostB + ":2", "sh", "-c",
                              "touch /dev/shm/ftmpi-$FTMPI_JOB_ID-rank$FTMPI_RANK; "
                              "if [ $FTMPI_RANK = 1 ]; then kill -9 $$; fi; exec " + helper("sleep_forever")});
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGKILL);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(std::regex_match(lines[0], std::regex("ftrun: rank 1 \\(pid \\d+ on " + kHostB +
                                                   "\\) was killed by signal 9 \\(Killed\\); terminating the job")),
             lines[0]);
  for (const auto& [rank, pid] : dir.rank_pids()) {
    BOOST_TEST((kill(pid, 0) == -1 && errno == ESRCH), "rank " << rank << " is still there");
  }
  for (const std::string& host : {kHostA, kHostB}) {
    for (const std::string& name : shm_entries(dir, host)) {
      BOOST_TEST(!name.starts_with("ftmpi-"), name << " was left behind on " << host);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_abort_on_the_other_host_ends_the_job_with_its_code) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "3", "--host", kHostA + "," + kHostB + ":2", helper("abort_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 3);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 aborted the job with error code 3: rank 1 gives up"}));
  BOOST_TEST(f.out == "rank 1 is about to abort");
  BOOST_TEST((f.elapsed < 15s));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(output_of_both_hosts_is_forwarded_whole_lines_and_tagged) {
  TempDir dir;
  Finished f = run_in_a(
      dir, {"-n", "4", "--host", hosts_2_2(), "--tag-output", "sh", "-c", "printf 'a\\nb'; echo c >&2"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_TEST((out == std::vector<std::string>{"[0] a", "[0] b", "[1] a", "[1] b", "[2] a", "[2] b", "[3] a",
                                              "[3] b"}));
  auto err = lines_of(f.err);
  std::sort(err.begin(), err.end());
  BOOST_TEST((err == std::vector<std::string>{"[0] c", "[1] c", "[2] c", "[3] c"}));
  // Untagged, bytes pass unchanged, a last line without newline included.
  Finished plain = run_in_a(dir, {"-n", "1", "--host", kHostB, "sh", "-c", "printf 'x\\ny'"});
  BOOST_TEST(plain.exit_code() == 0);
  BOOST_TEST(plain.out == "x\ny");
}

BOOST_AUTO_TEST_CASE(stdin_reaches_rank_0_on_the_other_host) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "3", "--host", kHostB + "," + kHostA + ":2", helper("echo_stdin")},
                        std::string("one\ntwo\n"));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "echo: one\necho: two\n");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(sigterm_to_ftrun_reaches_the_ranks_on_both_hosts) {
  TempDir dir;
  Process p(ftrun_in_a({"-n", "4", "--host", hosts_2_2(), helper("sleep_forever")}), dir);
  BOOST_REQUIRE(p.wait_for_lines(4));
  p.signal(SIGTERM);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGTERM);
  BOOST_TEST(
      (ftrun_lines(f.err) ==
       std::vector<std::string>{"ftrun: received signal 15 (Terminated) and forwarded it to the ranks"}));
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(ranks_on_both_hosts_die_with_ftrun_even_when_it_is_killed) {
  TempDir dir;
  Process p(ftrun_in_a({"-n", "4", "--host", hosts_2_2(), helper("sleep_forever"), "--ignore-signals"}), dir);
  BOOST_REQUIRE(p.wait_for_lines(4));
  p.signal(SIGKILL);
  (void)p.finish();
  const auto pids = dir.rank_pids();
  BOOST_TEST(pids.size() == 4u);
  for (const auto& [rank, pid] : pids) {
    auto status = wait_child(pid, Clock::now() + kDeadline);
    BOOST_REQUIRE_MESSAGE(status.has_value(), "rank " << rank << " survived ftrun");
    BOOST_TEST(WIFSIGNALED(*status));
    BOOST_TEST(WTERMSIG(*status) == SIGKILL);
  }
}

BOOST_AUTO_TEST_CASE(sigint_to_ftrun_ends_every_rank_and_agent_on_both_hosts) {
  TempDir dir;
  // Each rank says who its parent is: ftrun on ftA, the agent on ftB.
  Process p(ftrun_in_a({"-n", "4", "--host", hosts_2_2(), "sh", "-c",
                        "echo parent $FTMPI_RANK $PPID; exec " + helper("sleep_forever")}),
            dir);
  BOOST_REQUIRE(p.wait_for_lines(8));
  std::set<pid_t> agents;
  for (const auto& [rank, parent] : parents_of(p.out_so_far())) {
    if (rank >= 2) agents.insert(parent);
  }
  BOOST_TEST(agents.size() == 1u);  // one agent for ftB's two ranks
  p.signal(SIGINT);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGINT);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: received signal 2 (Interrupt) and forwarded it to the ranks"}));
  require_ranks_gone(dir, 4);
  for (pid_t agent : agents) BOOST_TEST((kill(agent, 0) == -1 && errno == ESRCH), "agent " << agent << " survived");
}

BOOST_AUTO_TEST_CASE(a_killed_agent_fails_the_job_naming_its_host_and_its_ranks_end) {
  TempDir dir;
  Process p(ftrun_in_a({"-n", "4", "--host", hosts_2_2(), "sh", "-c",
                        "echo parent $FTMPI_RANK $PPID; exec " + helper("sleep_forever")}),
            dir);
  BOOST_REQUIRE(p.wait_for_lines(8));
  const pid_t agent = parents_of(p.out_so_far())[3];
  BOOST_REQUIRE(agent > 0);
  BOOST_REQUIRE(kill(agent, SIGKILL) == 0);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 255);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].starts_with("ftrun: lost ranks 2-3 on " + kHostB + ": "), lines[0]);
  BOOST_TEST(lines[0].ends_with("; terminating the job"), lines[0]);
  // ftB's ranks die with their agent (PR_SET_PDEATHSIG), re-parented to this test (a subreaper).
  const auto pids = dir.rank_pids();
  BOOST_REQUIRE(pids.size() == 4u);
  for (int rank : {2, 3}) {
    auto status = wait_child(pids.at(rank), Clock::now() + kDeadline);
    BOOST_REQUIRE_MESSAGE(status.has_value(), "rank " << rank << " survived its agent");
    BOOST_TEST((WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL));
  }
  for (int rank : {0, 1}) {
    BOOST_TEST((kill(pids.at(rank), 0) == -1 && errno == ESRCH), "rank " << rank << " is still there");
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_host_is_reported_by_the_agent_and_ends_the_job) {
  TempDir dir;
  Finished f = run_in_a(dir, {"-n", "2", "--host", kHostA + ",ftNowhere", helper("sleep_forever")});
  describe(f);
  BOOST_TEST(f.exit_code() == 255);
  BOOST_TEST(
      (ftrun_lines(f.err) ==
       std::vector<std::string>{"ftrun: error: cannot start rank 1 on ftNowhere: the launch agent failed "
                                "(unknown or unreachable host?); the launch agent exited with status 255; "
                                "terminating the job"}));
  BOOST_TEST(f.err.find("simhosts.sh agent: unknown host 'ftNowhere'") != std::string::npos);
  // Rank 0 may have been terminated before it wrote its pid file; if it did write one, it is gone.
  for (const auto& [rank, pid] : dir.rank_pids()) {
    BOOST_TEST((kill(pid, 0) == -1 && errno == ESRCH), "rank " << rank << " is still there");
  }
}

BOOST_AUTO_TEST_CASE(ranks_skip_an_address_whose_link_is_down) {
  TempDir dir;
  Healed healed(dir, kHostB);
  harness({"link", kHostB, "m0", "down"}, dir);  // ftrun's first address is unreachable from ftB at once
  // On every address (not only the management link's, the default): the rails' addresses are the next.
  Finished f = run_in_a(dir, {"-n", "2", "--host", kHostB + ":2", "--param", "rte.listen_address=0.0.0.0",
                              helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(lines_of(f.out).size() == 2u);
}

BOOST_AUTO_TEST_CASE(ranks_give_up_on_an_address_that_drops_everything_and_use_the_next) {
  TempDir dir;
  Healed healed(dir, kHostB);
  harness({"wire", kHostB, "m0", "100"}, dir);  // a cut cable: connects to ftrun's first address hang
  Finished f = run_in_a(dir, {"-n", "2", "--host", kHostB + ":2", "--param", "rte.listen_address=0.0.0.0",
                              helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(lines_of(f.out).size() == 2u);
  // Each rank waited out one attempt (2 s) on the dead address first.
  BOOST_TEST((f.elapsed >= 2s));
}

BOOST_AUTO_TEST_SUITE_END()
