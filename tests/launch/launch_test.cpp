// Runs the real ftrun on the helper programs of this folder and checks what a user would see: exit
// statuses, the one-line failure report, forwarded output, and that no rank outlives the job.
//
// Nothing here sleeps and hopes: every wait is for an event (output, EOF, exit) with a generous deadline.
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <regex>

#include "ftmpi/rte/job.hpp"
#include "launch_support.hpp"

using namespace ftmpi::launch_test;

namespace {

// Ranks orphaned by a killed ftrun are re-parented to this process, which can then reap them.
struct Subreaper {
  Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};
BOOST_TEST_GLOBAL_FIXTURE(Subreaper);

}  // namespace

BOOST_AUTO_TEST_SUITE(launch)

BOOST_AUTO_TEST_CASE(four_ranks_exchange_keys_and_exit_0) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "4", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
  const std::uint64_t job = expect_exchange_ok(f, 4);
  // The shared-memory segments the ranks created under the job's prefix are gone.
  const std::string prefix = ftmpi::rte::shm_prefix(job);
  for (const auto& entry : fs::directory_iterator("/dev/shm")) {
    BOOST_TEST(!entry.path().filename().string().starts_with(prefix), entry.path() << " was left behind");
  }
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(eight_ranks_bound_to_two_cores_finish) {
  TempDir dir;
  Finished f = ftrun(dir, {"-np", "8", "--bind-to", "core", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(lines_of(f.out).size() == 8u);
  require_ranks_gone(dir, 8);
}

BOOST_AUTO_TEST_CASE(an_abort_ends_the_job_with_its_code_and_one_line) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("abort_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 3);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 aborted the job with error code 3: rank 1 gives up"}));
  BOOST_TEST(f.out == "rank 1 is about to abort");  // a partial last line, flushed at EOF
  BOOST_TEST((f.elapsed < 10s));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_rank_killed_by_a_signal_ends_the_job_with_128_plus_the_signal) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("kill_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGKILL);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  const std::string pid = std::to_string(dir.rank_pids().at(1));
  BOOST_TEST(lines[0] ==
             "ftrun: rank 1 (pid " + pid + ") was killed by signal 9 (Killed); terminating the job");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_rank_exiting_5_before_finalize_ends_the_job_with_5) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "4", helper("exit5_rank2")});
  describe(f);
  BOOST_TEST(f.exit_code() == 5);
  const std::string pid = std::to_string(dir.rank_pids().at(2));
  BOOST_TEST((ftrun_lines(f.err) == std::vector<std::string>{"ftrun: rank 2 (pid " + pid +
                                                             ") exited with status 5; terminating the job"}));
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(a_rank_exiting_0_without_finalize_fails_the_job) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", helper("kv_exchange"), "--no-finalize"});
  describe(f);
  BOOST_TEST(f.exit_code() == 1);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].find("exited with status 0 without calling finalize") != std::string::npos);
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(programs_that_do_not_use_the_protocol_may_simply_exit) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", "true"});
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
}

BOOST_AUTO_TEST_CASE(tag_output_prefixes_every_line_with_its_rank) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", "--tag-output", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  const auto out = lines_of(f.out);
  BOOST_TEST(out.size() == 3u);
  for (const std::string& line : out) {
    std::smatch m;
    BOOST_TEST(std::regex_match(line, m, std::regex(R"(\[(\d)\] rank (\d) of 3: exchange ok .*)")), line);
    BOOST_TEST(m[1].str() == m[2].str());
  }
  // Both streams; a partial last line gets its own line.
  Finished sh = ftrun(dir, {"-n", "2", "--tag-output", "sh", "-c", "printf 'a\\nb'; echo c >&2"});
  BOOST_TEST(sh.exit_code() == 0);
  auto sorted = lines_of(sh.out);
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST((sorted == std::vector<std::string>{"[0] a", "[0] b", "[1] a", "[1] b"}));
  BOOST_TEST(sh.out.ends_with("\n"));
  auto err = lines_of(sh.err);
  std::sort(err.begin(), err.end());
  BOOST_TEST((err == std::vector<std::string>{"[0] c", "[1] c"}));
}

BOOST_AUTO_TEST_CASE(output_passes_unchanged_without_tags) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "1", "sh", "-c", "printf 'x\\ny'"});
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "x\ny");
}

BOOST_AUTO_TEST_CASE(stdin_reaches_rank_0_and_only_rank_0) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("echo_stdin")}, std::string("one\ntwo\n"));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "echo: one\necho: two\n");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_timeout_ends_the_job_with_124) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--timeout", "0.5", helper("sleep_forever")});
  describe(f);
  BOOST_TEST(f.exit_code() == 124);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  // Where the ranks stand (connected or not yet, so grouped or not) depends on how far a loaded machine
  // got them in 0.5 s; the next test pins the states down.
  BOOST_TEST(lines[0].starts_with("ftrun: the job timed out after 0.5 s (still running: "));
  BOOST_TEST(lines[0].ends_with("); terminating the job"));
  for (const char* rank : {"0", "1"}) {
    BOOST_TEST(std::regex_search(lines[0], std::regex(std::string("ranks? ([0-9]+[-, ]+)*") + rank + "\\b")),
               "rank " << rank << " named in: " << lines[0]);
  }
  BOOST_TEST((f.elapsed >= 500ms));
  BOOST_TEST((f.elapsed < 30s));
  // A rank writes its pid file once connected; those that got that far must be gone.
  for (const auto& [rank, pid] : dir.rank_pids()) {
    BOOST_TEST((kill(pid, 0) == -1 && errno == ESRCH), "rank " << rank << " (pid " << pid << ") is still there");
  }
}

BOOST_AUTO_TEST_CASE(a_timeout_says_where_each_rank_still_running_stands) {
  TempDir dir;
  // The timeout must outlast five ranks (ASan builds, a loaded machine) getting where they stay.
  Finished f = ftrun(dir, {"-n", "5", "--timeout", "10", helper("stand_still")});
  describe(f);
  BOOST_TEST(f.exit_code() == 124);
  // Every rank got where it stays long before the timeout (each says so first).
  for (int r = 0; r < 5; ++r) {
    BOOST_TEST(f.out.find("rank " + std::to_string(r) + " ready\n") != std::string::npos, "rank " << r);
  }
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: the job timed out after 10 s (still running: rank 3 not connected to "
                                       "ftrun; ranks 2, 4 in the program; rank 1 waiting in a fence (MPI_Init or "
                                       "MPI_Finalize); rank 0 finalized but not exited); terminating the job"}));
  require_ranks_gone(dir, 5);
}

BOOST_AUTO_TEST_CASE(sigterm_to_ftrun_is_forwarded_to_every_rank) {
  TempDir dir;
  Process p(ftrun_args({"-n", "3", helper("sleep_forever")}), dir);
  BOOST_REQUIRE(p.wait_for_lines(3));
  p.signal(SIGTERM);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGTERM);
  BOOST_TEST(
      (ftrun_lines(f.err) ==
       std::vector<std::string>{"ftrun: received signal 15 (Terminated) and forwarded it to the ranks"}));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(ranks_ignoring_the_signal_are_killed_after_the_grace) {
  TempDir dir;
  Process p(
      ftrun_args({"-n", "2", "--param", "rte.kill_grace=200ms", helper("sleep_forever"), "--ignore-signals"}),
      dir);
  BOOST_REQUIRE(p.wait_for_lines(2));
  const auto signalled = Clock::now();
  p.signal(SIGINT);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGINT);
  BOOST_TEST((Clock::now() - signalled >= 200ms));
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(ranks_die_with_ftrun_even_when_it_is_killed) {
  TempDir dir;
  Process p(ftrun_args({"-n", "2", helper("sleep_forever"), "--ignore-signals"}), dir);
  BOOST_REQUIRE(p.wait_for_lines(2));
  p.signal(SIGKILL);
  (void)p.finish();
  // PR_SET_PDEATHSIG killed them; as orphans they were re-parented to this process (a subreaper).
  for (const auto& [rank, pid] : dir.rank_pids()) {
    auto status = wait_child(pid, Clock::now() + kDeadline);
    BOOST_REQUIRE_MESSAGE(status.has_value(), "rank " << rank << " survived ftrun");
    BOOST_TEST(WIFSIGNALED(*status));
    BOOST_TEST(WTERMSIG(*status) == SIGKILL);
  }
}

BOOST_AUTO_TEST_CASE(a_wrong_flag_gives_exit_2_and_one_line) {
  TempDir dir;
  Finished f = ftrun(dir, {"--frobnicate", "-n", "2", helper("kv_exchange")});
  BOOST_TEST(f.exit_code() == 2);
  BOOST_TEST((lines_of(f.err) == std::vector<std::string>{"ftrun: error: unknown option '--frobnicate'",
                                                          "Run with --help for more information."}));
  BOOST_TEST(f.out.empty());
  BOOST_TEST(dir.rank_pids().empty());

  for (std::vector<std::string> bad : {std::vector<std::string>{"-n", "0", "true"},
                                       {"-n", "two", "true"},
                                       {"-n", "2"},
                                       {"true"},
                                       {"-n", "2", "--timeout", "-1", "true"},
                                       {"-n", "2", "--bind-to", "socket", "true"}}) {
    Finished b = ftrun(dir, bad);
    BOOST_TEST(b.exit_code() == 2);
    const auto lines = lines_of(b.err);
    BOOST_TEST(lines.size() == 2u);
    BOOST_TEST(lines.front().starts_with("ftrun: error: "));
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_param_is_rejected) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "1", "--param", "rte.kill_grase=1s", "true"});
  BOOST_TEST(f.exit_code() == 2);
  BOOST_TEST(f.err.find("unknown parameter 'rte.kill_grase'") != std::string::npos);
  Finished bad_value = ftrun(dir, {"-n", "1", "--param", "rte.kill_grace=soon", "true"});
  BOOST_TEST(bad_value.exit_code() == 2);
  BOOST_TEST(bad_value.err.find("rte.kill_grace") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_unknown_program_is_rejected_before_launch) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "no-such-program-ftmpi"});
  BOOST_TEST(f.exit_code() == 127);
  BOOST_TEST((lines_of(f.err) ==
              std::vector<std::string>{"ftrun: error: cannot find program 'no-such-program-ftmpi'"}));
}

BOOST_AUTO_TEST_CASE(params_and_the_environment_contract_reach_every_rank) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--tag-output", "--param", "rte.connect_timeout=7s", "sh", "-c",
                           "echo $FTMPI_RANK/$FTMPI_SIZE $FTMPI_LOCAL_RANK/$FTMPI_LOCAL_SIZE "
                           "$FTMPI_RTE_CONNECT_TIMEOUT ${#FTMPI_RTE_SECRET} $FTMPI_RTE_ADDR"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 2u);
  BOOST_TEST(std::regex_match(out[0], std::regex(R"(\[0\] 0/2 0/2 7s 64 127\.0\.0\.1:\d+)")), out[0]);
  BOOST_TEST(std::regex_match(out[1], std::regex(R"(\[1\] 1/2 1/2 7s 64 127\.0\.0\.1:\d+)")), out[1]);
}

BOOST_AUTO_TEST_CASE(bind_to_core_gives_ranks_distinct_cores) {
  cpu_set_t mine;
  BOOST_REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
  if (CPU_COUNT(&mine) < 2) {
    BOOST_TEST_MESSAGE("skipped: this process may run on fewer than 2 CPUs");
    return;
  }
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--bind-to", "core", "--tag-output", "sh", "-c",
                           "grep Cpus_allowed_list /proc/self/status"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 2u);
  const std::string cpus0 = out[0].substr(out[0].find('\t') + 1);
  const std::string cpus1 = out[1].substr(out[1].find('\t') + 1);
  BOOST_TEST(cpus0 != cpus1);
  Finished unbound = ftrun(dir, {"-n", "1", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  BOOST_TEST(unbound.out.substr(unbound.out.find('\t') + 1) != cpus0 + "\n");
}

BOOST_AUTO_TEST_CASE(a_program_run_alone_is_a_singleton) {
  TempDir dir;
  Process p({helper("kv_exchange")}, dir);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out.starts_with("rank 0 of 1: exchange ok"));
}

BOOST_AUTO_TEST_CASE(a_rank_started_by_hand_with_part_of_the_contract_is_told_why) {
  TempDir dir;
  Process p({helper("kv_exchange")}, dir, {}, {"FTMPI_RANK=0"});
  Finished f = p.finish();
  BOOST_TEST(f.exit_code() == 99);
  BOOST_TEST(f.err.find("FTMPI_SIZE is not set") != std::string::npos, f.err);
}

BOOST_AUTO_TEST_CASE(help_version_and_help_params_exit_0) {
  TempDir dir;
  Finished help = ftrun(dir, {"--help"});
  BOOST_TEST(help.exit_code() == 0);
  BOOST_TEST(help.out.starts_with("Usage: ftrun -n N [options] [--] program [args...]"));
  BOOST_TEST(help.out.find("Examples:") != std::string::npos);
  BOOST_TEST(help.out.find("Exit status:") != std::string::npos);
  Finished version = ftrun(dir, {"--version"});
  BOOST_TEST(version.exit_code() == 0);
  BOOST_TEST(version.out.starts_with("ftrun (ftmpi) "));
  Finished params = ftrun(dir, {"--help-params", "--param", "rte.kill_grace=3s"});
  BOOST_TEST(params.exit_code() == 0);
  BOOST_TEST(params.out.find("rte.kill_grace") != std::string::npos);
  BOOST_TEST(params.out.find("now 3s") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// Ranks on "other hosts" without namespaces: fake_agent.sh is called like ssh but runs the command line
// here, so the remote code path (command line, environment, secret on stdin, agent exit statuses) runs for
// real. ftrun is kept on loopback: these tests send nothing beyond 127.0.0.1.
BOOST_AUTO_TEST_SUITE(launch_through_an_agent)

namespace {

std::vector<std::string> through_agent(std::vector<std::string> args) {
  std::vector<std::string> head{"--launch-agent", FAKE_AGENT, "--param", "rte.listen_address=127.0.0.1"};
  head.insert(head.end(), args.begin(), args.end());
  return head;
}

std::string pid_of(const TempDir& dir, int rank) { return std::to_string(dir.rank_pids().at(rank)); }

// A file that goes away with the test.
struct TempFile {
  explicit TempFile(const TempDir& dir, std::string_view name, std::string_view text)
      : path((dir.path / name).string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove(path); }
  std::string path;
};

}  // namespace

BOOST_AUTO_TEST_CASE(ranks_fill_the_hosts_slots_and_carry_the_contract_through_the_agent) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "4", "--host", "nodeA:2,nodeB:2", "--tag-output", "sh", "-c",
                                         "echo $FAKE_AGENT_HOST $FTMPI_RANK/$FTMPI_SIZE "
                                         "$FTMPI_LOCAL_RANK/$FTMPI_LOCAL_SIZE ${#FTMPI_RTE_SECRET} "
                                         "$FTMPI_RTE_ADDR $(pwd)"}));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 4u);
  const std::string cwd = fs::current_path().string();
  const char* expected[] = {R"(\[0\] nodeA 0/4 0/2)", R"(\[1\] nodeA 1/4 1/2)", R"(\[2\] nodeB 2/4 0/2)",
                            R"(\[3\] nodeB 3/4 1/2)"};
  for (int r = 0; r < 4; ++r) {
    const bool ok =
        std::regex_match(out[r], std::regex(std::string(expected[r]) + R"( 64 127\.0\.0\.1:\d+ .*)")) &&
        out[r].ends_with(" " + cwd);
    BOOST_TEST(ok, out[r]);
  }
}

BOOST_AUTO_TEST_CASE(ranks_started_by_the_agent_wire_up_and_exit_0) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "4", "--host", "nodeA:2,nodeB:2", helper("kv_exchange")}));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
  BOOST_TEST(lines_of(f.out).size() == 4u);
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(a_remote_ranks_exit_status_and_pid_on_its_host_are_reported) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "4", "--host", "nodeA:2,nodeB:2", helper("exit5_rank2")}));
  describe(f);
  BOOST_TEST(f.exit_code() == 5);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 2 (pid " + pid_of(dir, 2) +
                                       " on nodeB) exited with status 5; terminating the job"}));
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(a_remote_rank_killed_by_a_signal_gives_128_plus_the_signal) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "3", "--host", "nodeA:3", helper("kill_rank1")}));
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGKILL);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 (pid " + pid_of(dir, 1) +
                                       " on nodeA) was killed by signal 9 (Killed); terminating the job"}));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_remote_abort_ends_the_job_with_its_code) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "3", "--host", "nodeA,nodeB:2", helper("abort_rank1")}));
  describe(f);
  BOOST_TEST(f.exit_code() == 3);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 aborted the job with error code 3: rank 1 gives up"}));
  BOOST_TEST(f.out == "rank 1 is about to abort");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(stdin_reaches_a_remote_rank_0_after_the_secret_and_nothing_reaches_the_others) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "3", "--host", "nodeA:3", helper("echo_stdin")}),
                     std::string("one\ntwo\n"));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "echo: one\necho: two\n");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(sigterm_reaches_remote_ranks_through_their_agents) {
  TempDir dir;
  Process p(ftrun_args(through_agent({"-n", "2", "--host", "nodeA:2", helper("sleep_forever")})), dir);
  BOOST_REQUIRE(p.wait_for_lines(2));
  p.signal(SIGTERM);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGTERM);
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(an_unknown_host_is_reported_as_the_agent_says_with_its_status) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "2", "--host", "nodeA,unknown-host", helper("kv_exchange")}));
  describe(f);
  BOOST_TEST(f.exit_code() == 255);
  BOOST_TEST(
      (ftrun_lines(f.err) ==
       std::vector<std::string>{"ftrun: error: cannot start rank 1 on unknown-host: the launch agent failed "
                                "(unknown or unreachable host?); the launch agent exited with status 255; "
                                "terminating the job"}));
  BOOST_TEST(f.err.find("fake_agent.sh: Could not resolve hostname unknown-host") != std::string::npos);
}

// Whatever connects to ftrun's agent listener must be an agent of the job: a wrong secret, a rank's hello
// or a frame cut short is refused, counted and logged, and never starts anything.
BOOST_AUTO_TEST_CASE(a_forged_or_malformed_agent_hello_is_refused_and_counted) {
  TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"wrong-secret", "wrong secret"}, {"rank-hello", "unknown frame type 1"}, {"truncated", "closed in the middle of a frame"}};
  for (const auto& [host, why] : cases) {
    Finished f = ftrun(dir, {"-n", "1", "--host", host, "--launch-agent", FORGING_AGENT, "--param",
                             "rte.listen_address=127.0.0.1", "true"});
    describe(f);
    BOOST_TEST(f.exit_code() == 1, host);
    const std::string refused = std::string("refused a host agent's connection from 127.0.0.1:");
    BOOST_TEST(f.err.find(refused) != std::string::npos, host);
    BOOST_TEST(f.err.find(std::string(": ") + why + " (1 authentication failures, 0 protocol errors so far)") !=
                   std::string::npos,
               host);
    BOOST_TEST(f.err.find(std::string("ftrun: error: cannot start rank 0 on ") + host +
                          ": its agent ended before it connected to ftrun; the launch agent exited with status 1") !=
                   std::string::npos,
               host);
  }
}

BOOST_AUTO_TEST_CASE(a_missing_launch_agent_is_refused_before_launch) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "1", "--host", "nodeA", "--launch-agent", "/no/such/agent -x", "true"});
  BOOST_TEST(f.exit_code() == 127);
  BOOST_TEST((lines_of(f.err) ==
              std::vector<std::string>{"ftrun: error: launch agent: cannot find program '/no/such/agent'"}));
  // Not needed, so not looked up, when every host is this one.
  Finished local = ftrun(dir, {"-n", "1", "--host", "localhost", "--launch-agent", "/no/such/agent", "true"});
  BOOST_TEST(local.exit_code() == 0);
}

BOOST_AUTO_TEST_CASE(ranks_on_this_host_are_forked_within_its_slots) {
  TempDir dir;
  Finished f =
      ftrun(dir, through_agent({"--host", "localhost:3", "--tag-output", "sh", "-c",
                                "echo ${FAKE_AGENT_HOST:-forked} $FTMPI_LOCAL_RANK/$FTMPI_LOCAL_SIZE"}));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_TEST((out == std::vector<std::string>{"[0] forked 0/3", "[1] forked 1/3", "[2] forked 2/3"}));

  Finished over = ftrun(dir, {"-n", "3", "--host", "localhost:2", "true"});
  BOOST_TEST(over.exit_code() == 2);
  BOOST_TEST((lines_of(over.err) ==
              std::vector<std::string>{"ftrun: error: 3 ranks do not fit in the 2 slots of 1 host (use "
                                       "--oversubscribe to allow more ranks than slots)",
                                       "Run with --help for more information."}));
  Finished allowed = ftrun(dir, {"-n", "3", "--host", "localhost:2", "--oversubscribe", "true"});
  BOOST_TEST(allowed.exit_code() == 0);
}

BOOST_AUTO_TEST_CASE(a_hostfile_places_ranks_and_a_bad_line_is_named) {
  TempDir dir;
  TempFile good(dir, "hosts.txt", "# two nodes\nnodeA slots=1\nnodeB slots=2 # big one\n");
  Finished f = ftrun(dir, through_agent({"-n", "3", "--hostfile", good.path, "--tag-output", "sh", "-c",
                                         "echo $FAKE_AGENT_HOST"}));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_TEST((out == std::vector<std::string>{"[0] nodeA", "[1] nodeB", "[2] nodeB"}));

  TempFile bad(dir, "bad.txt", "nodeA\nnodeB slots=many\n");
  Finished b = ftrun(dir, {"-n", "2", "--hostfile", bad.path, "true"});
  BOOST_TEST(b.exit_code() == 2);
  BOOST_TEST(lines_of(b.err).front() ==
             "ftrun: error: " + bad.path + ":2: slots 'many' is not a number from 1 to 4096");
  Finished missing = ftrun(dir, {"-n", "2", "--hostfile", (dir.path / "none.txt").string(), "true"});
  BOOST_TEST(missing.exit_code() == 2);
  BOOST_TEST(lines_of(missing.err).front().starts_with("ftrun: error: cannot read hostfile"));
  Finished both = ftrun(dir, {"-n", "2", "--hostfile", good.path, "--host", "a", "true"});
  BOOST_TEST(both.exit_code() == 2);
  Finished bad_host = ftrun(dir, {"-n", "1", "--host", "-oProxyCommand=x", "true"});
  BOOST_TEST(bad_host.exit_code() == 2);
  BOOST_TEST(lines_of(bad_host.err).front().find("starts with '-'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(binding_is_refused_for_ranks_on_other_hosts) {
  TempDir dir;
  Finished f = ftrun(dir, through_agent({"-n", "2", "--host", "nodeA:2", "--bind-to", "core", "true"}));
  BOOST_TEST(f.exit_code() == 2);
  BOOST_TEST(lines_of(f.err).front().find("--bind-to core binds only ranks on ftrun's own host") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(ftrun_on_every_address_advertises_them_all_then_loopback) {
  TempDir dir;
  // The program never connects, so nothing is sent: this only reads the list ranks would be given. The
  // agent's host name does not resolve here, so ftrun cannot tell which address reaches it.
  Finished f = ftrun(
      dir, {"-n", "1", "--host", "nodeA", "--launch-agent", FAKE_AGENT, "sh", "-c", "echo $FTMPI_RTE_ADDR"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(f.out, m, std::regex(R"(127\.0\.0\.1:(\d+)\n$)")));
  BOOST_TEST(std::regex_match(f.out, std::regex(R"(((\d+\.){3}\d+:)" + m[1].str() + R"(,)*127\.0\.0\.1:)" +
                                                m[1].str() + "\n")),
             f.out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(path_flags)

BOOST_AUTO_TEST_CASE(paths_rails_faults_and_the_fault_plan_reach_every_rank) {
  TempDir dir;
  std::ofstream(dir.path / "plan.txt") << "drop=0.5\n";
  const fs::path here = fs::current_path();
  fs::current_path(dir.path);  // a relative plan must reach the ranks as an absolute path
  Finished f = ftrun(dir, {"-n", "1", "--paths", "udp", "--rails", "r1,r2", "--fault", "drop=0.1", "--fault",
                           "blackhole,rail=1", "--fault-plan", "plan.txt", "sh", "-c",
                           "printf '%s\\n' \"$FTMPI_PATH_KINDS\" \"$FTMPI_PATH_RAILS\" \"$FTMPI_PATH_FAULT\" "
                           "\"$FTMPI_PATH_FAULT_PLAN\""});
  fs::current_path(here);
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST((lines_of(f.out) == std::vector<std::string>{"udp", "r1,r2", "drop=0.1;blackhole,rail=1",
                                                          (dir.path / "plan.txt").string()}));
  // The flags win over --param.
  Finished over = ftrun(dir, {"-n", "1", "--param", "path.kinds=shm", "--paths", "shm,udp", "sh", "-c",
                              "echo $FTMPI_PATH_KINDS"});
  BOOST_TEST(over.out == "shm,udp\n");
  Finished help = ftrun(dir, {"--help-params", "--paths", "shm"});
  BOOST_TEST(help.out.find("now shm") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_path_flags_are_refused_before_launch) {
  TempDir dir;
  auto refused = [&](std::vector<std::string> args, std::string_view message) {
    args.insert(args.begin(), {"-n", "1"});
    args.push_back("true");
    Finished f = ftrun(dir, args);
    BOOST_TEST(f.exit_code() == 2);
    BOOST_TEST(lines_of(f.err).front() == "ftrun: error: " + std::string(message));
  };
  refused({"--paths", "tcp"}, "--paths: unknown path kind 'tcp' (known: shm, udp, verbs)");
  refused({"--paths", "shm,,udp"}, "--paths: empty item in 'shm,,udp'");
  refused({"--rails", "r1,"}, "--rails: empty item in 'r1,'");
  refused({"--fault", ""}, "--fault: empty SPEC");
  refused({"--fault-plan", (dir.path / "none.txt").string()},
          "--fault-plan: cannot read '" + (dir.path / "none.txt").string() + "': No such file or directory");
  refused({"--fault-plan", dir.path.string()},
          "--fault-plan: cannot read '" + dir.path.string() + "': not a regular file");
}

BOOST_AUTO_TEST_SUITE_END()

// ftrun inside a Slurm allocation (SLURM_JOB_ID set), with the allocation's variables given by hand: how
// it takes hosts, slots and -n from them needs no Slurm (tests/slurm runs it under a real one).
BOOST_AUTO_TEST_SUITE(slurm_allocation)

namespace {

std::string this_host() {
  char name[256] = {};
  BOOST_REQUIRE(gethostname(name, sizeof name - 1) == 0);
  return name;
}

// ftrun ARGS inside the allocation whose variables are `slurm` (SLURM_JOB_ID=7 added).
Finished ftrun_in_allocation(const TempDir& dir, std::vector<std::string> args, std::vector<std::string> slurm) {
  slurm.push_back("SLURM_JOB_ID=7");
  Process p(ftrun_args(std::move(args)), dir, {}, slurm);
  return p.finish();
}

std::vector<std::string> sorted_lines(const std::string& text) {
  auto lines = lines_of(text);
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_allocations_tasks_are_the_slots_and_the_default_rank_count) {
  TempDir dir;
  const std::vector<std::string> three_here{"SLURM_JOB_NODELIST=" + this_host(), "SLURM_TASKS_PER_NODE=3"};
  const std::vector<std::string> rank_of_size{"--tag-output", "sh", "-c", "echo $FTMPI_RANK/$FTMPI_SIZE"};
  Finished f = ftrun_in_allocation(dir, rank_of_size, three_here);
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST((sorted_lines(f.out) == std::vector<std::string>{"[0] 0/3", "[1] 1/3", "[2] 2/3"}));

  // SLURM_NTASKS, when set, is the default.
  auto two = three_here;
  two.push_back("SLURM_NTASKS=2");
  Finished f2 = ftrun_in_allocation(dir, rank_of_size, two);
  BOOST_TEST(f2.exit_code() == 0);
  BOOST_TEST((sorted_lines(f2.out) == std::vector<std::string>{"[0] 0/2", "[1] 1/2"}));

  // More ranks than the allocation's tasks only with --oversubscribe.
  Finished over = ftrun_in_allocation(dir, {"-n", "4", "true"}, three_here);
  BOOST_TEST(over.exit_code() == 2);
  BOOST_TEST((lines_of(over.err) ==
              std::vector<std::string>{"ftrun: error: the Slurm allocation 7: 4 ranks do not fit in the 3 slots of "
                                       "1 host (use --oversubscribe to allow more ranks than slots)",
                                       "Run with --help for more information."}));
  Finished allowed = ftrun_in_allocation(dir, {"-n", "4", "--oversubscribe", "true"}, three_here);
  BOOST_TEST(allowed.exit_code() == 0);

  // --host sets the allocation aside.
  Finished hosts = ftrun_in_allocation(dir, {"--host", "localhost:5", "true"}, three_here);
  BOOST_TEST(hosts.exit_code() == 0);
}

BOOST_AUTO_TEST_CASE(a_missing_or_malformed_allocation_variable_is_named_with_exit_2) {
  TempDir dir;
  const std::string here = this_host();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"SLURM_JOB_NODELIST=" + here + "[1-", "SLURM_TASKS_PER_NODE=1"},
       "ftrun: error: the Slurm allocation: SLURM_JOB_NODELIST='" + here + "[1-': '" + here +
           "[1-' has a '[' without its ']'"},
      {{"SLURM_JOB_NODELIST=" + here, "SLURM_TASKS_PER_NODE=3(x"},
       "ftrun: error: the Slurm allocation: SLURM_TASKS_PER_NODE='3(x': '3(x' is not N or N(xK) with positive "
       "numbers"},
      {{"SLURM_JOB_NODELIST=" + here, "SLURM_TASKS_PER_NODE=1(x2)"},
       "ftrun: error: the Slurm allocation: SLURM_JOB_NODELIST='" + here +
           "' names 1 node but SLURM_TASKS_PER_NODE='1(x2)' gives tasks for 2"},
      {{"SLURM_JOB_NODELIST=" + here, "SLURM_TASKS_PER_NODE=1", "SLURM_NTASKS=many"},
       "ftrun: error: the Slurm allocation: SLURM_NTASKS='many' is not a number from 1 to 4096"},
      {{"SLURM_JOB_NODELIST=" + here},
       "ftrun: error: SLURM_JOB_ID=7 says ftrun runs in a Slurm allocation, but SLURM_TASKS_PER_NODE is not set: "
       "give the hosts (--host localhost runs every rank here)"},
  };
  for (const auto& [slurm, message] : cases) {
    Finished f = ftrun_in_allocation(dir, {"true"}, slurm);
    BOOST_TEST(f.exit_code() == 2);
    BOOST_TEST((lines_of(f.err) == std::vector<std::string>{message, "Run with --help for more information."}));
  }
  BOOST_TEST(dir.rank_pids().empty());
}

BOOST_AUTO_TEST_CASE(ranks_on_other_nodes_need_srun_in_path) {
  TempDir dir;
  Process p({"/usr/bin/env", "PATH=/nonexistent", FTRUN_PATH, "/bin/true"}, dir, {},
            {"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=" + this_host() + ",elsewhere", "SLURM_TASKS_PER_NODE=1(x2)"});
  Finished f = p.finish();
  BOOST_TEST(f.exit_code() == 127);
  BOOST_TEST((lines_of(f.err) == std::vector<std::string>{"ftrun: error: ranks on other nodes of the Slurm "
                                                          "allocation are started with srun: cannot find "
                                                          "program 'srun'"}));
}

BOOST_AUTO_TEST_SUITE_END()
