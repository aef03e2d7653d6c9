// ftinject: fault drills on live jobs (docs/ftinject.md). A thin main: the control plane is
// rte/control.hpp, the SPEC language path/fault.hpp, drills and timelines libs/drill.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/base/text_table.hpp"
#include "ftmpi/drill/drill_file.hpp"
#include "ftmpi/drill/runner.hpp"
#include "ftmpi/drill/timeline.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/rte/control.hpp"

namespace {

namespace base = ftmpi::base;
namespace drill = ftmpi::drill;
namespace path = ftmpi::path;
namespace rte = ftmpi::rte;
using base::JsonValue;

// Exit statuses, each one cause (docs/ftinject.md).
constexpr int kExitFailed = 1;       // a drill's expectation did not hold; anything else unexpected
constexpr int kExitUsage = 2;        // the command line, a SPEC or a drill file is wrong
constexpr int kExitNoJob = 3;        // no such job, or it ended (before or during the drill)
constexpr int kExitUnknownRail = 4;  // a rank knows no such rail
constexpr int kExitRefused = 5;      // the fault would reach the application (or the last working rail)
constexpr int kExitNoAnswer = 6;     // some ranks did not answer in time; a drill's step command failed

struct Failure {
  int status;
  std::string message;
};
[[noreturn]] void fail(int status, const std::string& message) { throw Failure{status, message}; }

constexpr const char* kUsage = R"(ftinject: inject faults into a running ftmpi job, and run fault drills

  ftinject [JOB] SPEC [--rank L] [--rail R] [--for D]   add a fault until cleared (or for D)
  ftinject [JOB] clear [--rank L] [--rail R]            remove faults
  ftinject [JOB] status [--json]                        faults per rank and rail; injected, detected, resent
  ftinject drill FILE [--json] [--timeline OUT] [--svg OUT] [--done-file F] -- ftrun ARGS PROGRAM...
  ftinject drill FILE --job JOB [...]                   a drill on a running job
  ftinject timeline FILE [--svg OUT] [--json]           print or draw a drill's recorded timeline

JOB is a job id or a unique prefix (ftpath list); without one, your only running job.
SPEC is the fault language of ftrun --fault: drop=P, corrupt=P, dup=P, reorder=P, delay=D, blackhole,
rail=R, after=W, for=W, seed=N, comma-separated (e.g. drop=0.05,rail=1).
Exit: 0 done (a drill: every expectation held), 1 a drill failed, 2 usage, 3 no job or it ended,
4 unknown rail, 5 refused (the fault would reach the application), 6 ranks did not answer.
)";

int status_of_refusal(const JsonValue& reply) {
  int status = 0;
  for (const JsonValue& rank : reply["ranks"].items()) {
    if (rank["ok"].as_bool()) continue;
    const std::string& code = rank["code"].as_string();
    const int s = code == "unknown_rail" ? kExitUnknownRail : code == "refused" ? kExitRefused : kExitUsage;
    status = status == 0 ? s : std::min(status, s);
  }
  return status;
}

// Asks the job; failures of the request as a whole end the program with their status.
rte::ControlAnswer ask(const std::string& which, const rte::ControlRequest& request) {
  auto job = rte::find_job(which);
  if (!job) fail(job.code() == base::Errc::invalid_argument ? kExitUsage : job.code() == base::Errc::io_error ? kExitFailed : kExitNoJob,
                 job.status().message());
  auto answer = rte::ask_job(*job, request);
  if (!answer) {
    const base::Errc code = answer.code();
    fail(code == base::Errc::invalid_argument ? kExitUsage
         : code == base::Errc::peer_unreachable || code == base::Errc::not_found ? kExitNoJob
                                                                                  : kExitFailed,
         answer.status().message());
  }
  return std::move(*answer);
}

// One line per rank that refused or did not answer; the exit status that says so.
int report_problems(const rte::ControlAnswer& a) {
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) std::cerr << "ftinject: rank " << rank["rank"].as_u64() << ": " << rank["error"].as_string() << "\n";
  }
  for (const JsonValue& m : a.reply["missing"].items()) {
    std::cerr << "ftinject: rank " << m["rank"].as_u64() << " (" << m["host"].as_string() << ") " << m["why"].as_string() << "\n";
  }
  if (a.refused) return status_of_refusal(a.reply);
  return a.missing ? kExitNoAnswer : 0;
}

// The answer as JSON, or one line per rank that took the request (`line` makes it from the rank's reply).
void print_answer(const rte::ControlAnswer& a, bool json, const std::function<std::string(const JsonValue&)>& line) {
  if (json) {
    std::cout << base::to_json(a.reply) << "\n";
    return;
  }
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (rank["ok"].as_bool()) std::cout << "rank " << rank["rank"].as_u64() << ": " << line(rank["reply"]) << "\n";
  }
}

rte::ControlRequest request_for(rte::ControlOp op, const std::string& ranks, const std::string& timeout) {
  rte::ControlRequest r;
  r.op = op;
  if (!ranks.empty()) {
    auto list = rte::parse_rank_list(ranks);
    if (!list) fail(kExitUsage, "--rank: " + list.status().message());
    r.ranks = std::move(*list);
  }
  if (!timeout.empty()) {
    auto t = base::parse_duration(timeout);
    if (!t || t->count() <= 0 || *t > rte::kControlMaxTimeout) fail(kExitUsage, "--timeout: '" + timeout + "' is not a duration up to 60s");
    r.timeout = *t;
  }
  return r;
}

int inject(const std::string& job, const std::string& text, const std::string& ranks, const std::string& rail,
           const std::string& lasts, const std::string& timeout, bool json) {
  auto spec = path::parse_fault_spec(text);
  if (!spec) fail(kExitUsage, spec.status().message());
  if (!lasts.empty()) {
    if (spec->lasts || spec->lasts_bytes) fail(kExitUsage, "--for and the SPEC's for= both say how long; give one");
    auto d = base::parse_duration(lasts);
    if (!d || d->count() <= 0) fail(kExitUsage, "--for: '" + lasts + "' is not a duration above 0 (2s, 500ms)");
    spec->lasts = *d;
  }
  if (!rail.empty() && !spec->rail.empty() && rail != spec->rail) {
    fail(kExitUsage, "--rail " + rail + " and the SPEC's rail=" + spec->rail + " differ; give one");
  }
  rte::ControlRequest r = request_for(rte::ControlOp::inject, ranks, timeout);
  r.rail = rail.empty() ? spec->rail : rail;
  spec->rail.clear();
  r.spec = path::to_string(*spec);
  const rte::ControlAnswer a = ask(job, r);
  print_answer(a, json, [](const JsonValue& reply) {
    std::string rails;
    for (const JsonValue& rl : reply["rails"].items()) {
      rails += (rails.empty() ? "" : ", ") + std::to_string(rl["index"].as_u64()) + " (" + rl["name"].as_string() + ")";
    }
    return reply["spec"].as_string() + " on rail " + rails;
  });
  const int status = report_problems(a);
  bool some_took_it = false;
  for (const JsonValue& rank : a.reply["ranks"].items()) some_took_it = some_took_it || rank["ok"].as_bool();
  if (status != 0 && some_took_it) {
    std::cerr << "ftinject: the ranks that answered without an error took the fault: 'ftinject clear' removes it\n";
  }
  return status;
}

int clear(const std::string& job, const std::string& ranks, const std::string& rail, const std::string& timeout,
          bool json) {
  rte::ControlRequest r = request_for(rte::ControlOp::clear, ranks, timeout);
  r.rail = rail;
  const rte::ControlAnswer a = ask(job, r);
  print_answer(a, json, [](const JsonValue& reply) {
    std::uint64_t specs = 0;
    for (const JsonValue& c : reply["cleared"].items()) specs += c["specs"].as_u64();
    return std::to_string(specs) + " fault(s) removed";
  });
  return report_problems(a);
}

std::string injected_text(const JsonValue& injected) {
  std::string out;
  for (const auto& [name, value] : injected.members()) {
    if (name == "frames_seen" || value.as_u64() == 0) continue;
    out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value.as_u64());
  }
  return out.empty() ? "-" : out;
}

int status(const std::string& job, const std::string& ranks, const std::string& timeout, bool json) {
  const rte::ControlAnswer a = ask(job, request_for(rte::ControlOp::faults, ranks, timeout));
  if (json) {
    std::cout << base::to_json(a.reply) << "\n";
    return report_problems(a);
  }
  std::cout << "job " << a.job.id << ": " << a.job.ranks << " ranks, " << a.job.command << "\n";
  base::TextTable t({"RANK", "RAIL", "NAME", "FAULTS", "INJECTED", "DETECTED", "RETRANSMITS", "SINCE"});
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) continue;
    const JsonValue& reply = rank["reply"];
    const std::string since = reply["since"].is_null() ? "start" : reply["since"].as_string();
    for (const JsonValue& rail : reply["rails"].items()) {
      std::string faults;
      for (const JsonValue& f : rail["faults"].items()) {
        faults += (faults.empty() ? "" : "; ") + f["spec"].as_string() + (f["state"].as_string() == "active" ? "" : " (" + f["state"].as_string() + ")");
      }
      if (!rail["injectable"].as_bool()) faults = "(shared memory: none possible)";
      t.add({std::to_string(rank["rank"].as_u64()), std::to_string(rail["index"].as_u64()), rail["name"].as_string(),
             faults.empty() ? "-" : faults, injected_text(rail["injected"]), std::to_string(rail["detected"].as_u64()),
             std::to_string(rail["retransmits"].as_u64()), since});
    }
  }
  std::cout << t.text();
  std::cout << "INJECTED: what the rank's fault layer did to frames it sent; DETECTED: frames it received and refused "
               "as corrupt or malformed.\n";
  return report_problems(a);
}

void print_verdict(const drill::Timeline& t) {
  base::TextTable table({"EXPECTATION", "MEASURED", "LIMIT", "RESULT", "HOW"});
  for (const drill::Check& c : t.verdict) table.add({c.name, c.measured, c.limit, c.pass ? "pass" : "FAIL", c.note});
  std::cout << table.text();
}

void print_json_result(const drill::RunResult& r, std::string_view ended) {
  base::JsonWriter w;
  w.begin_object().field("job", r.timeline.header.job).field("ended", ended).field("passed", r.passed);
  if (!r.message.empty()) w.field("message", r.message);
  if (r.observed.exit_status) w.field("exit_status", std::int64_t{*r.observed.exit_status});
  w.key("steps").begin_array();
  for (const drill::Step& s : r.timeline.steps) {
    w.begin_object().field("at_s", static_cast<double>(s.at_us - r.timeline.header.started_us) / 1e6);
    w.field("step", s.text).field("ok", s.ok).field("outcome", s.outcome).end_object();
  }
  w.end_array().key("verdict").begin_array();
  for (const drill::Check& c : r.timeline.verdict) {
    w.begin_object().field("expectation", c.name).field("measured", c.measured).field("limit", c.limit);
    w.field("pass", c.pass).field("how", c.note).end_object();
  }
  w.end_array().end_object();
  std::cout << std::move(w).text() << "\n";
}

int run_drill(const std::string& file, const std::vector<std::string>& command, const std::string& job, bool json,
              const std::string& timeline_out, const std::string& svg_out, const std::string& done_file,
              const std::string& poll) {
  auto text = base::read_file(file);
  if (!text) fail(kExitUsage, "drill file: " + text.status().message());
  auto parsed = drill::parse_drill(*text, file);
  if (!parsed) fail(kExitUsage, parsed.status().message());
  if (command.empty() == job.empty()) {
    fail(kExitUsage, "a drill needs its job: '-- ftrun ARGS PROGRAM...' to launch one, or --job JOB for a running one");
  }
  drill::RunOptions options;
  options.command = command;
  options.job = job;
  options.done_file = done_file;
  options.drill_name = file;
  if (!poll.empty()) {
    auto d = base::parse_duration(poll);
    if (!d || *d < std::chrono::milliseconds(20)) fail(kExitUsage, "--poll: '" + poll + "' is not a duration of 20ms or more");
    options.poll_interval = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  bool line_shown = false;
  if (terminal) {
    options.progress = [&](const std::string& line) {
      std::cerr << "\r\033[K" << line << std::flush;
      line_shown = true;
    };
  }
  options.output = [&](const std::string& line) {
    if (line_shown) std::cerr << "\r\033[K" << std::flush;
    line_shown = false;
    (json ? std::cerr : std::cout) << line << "\n" << std::flush;  // --json keeps stdout for the verdict
  };
  auto result = drill::run_drill(*parsed, options);
  if (line_shown) std::cerr << "\r\033[K" << std::flush;
  if (!result) fail(kExitFailed, result.status().message());
  const drill::RunResult& r = *result;
  if (!timeline_out.empty()) {
    if (auto s = drill::write_timeline(timeline_out, r.timeline); !s) std::cerr << "ftinject: " << s.message() << "\n";
  }
  if (!svg_out.empty()) {
    if (auto s = base::write_file(svg_out, drill::timeline_svg(r.timeline)); !s) std::cerr << "ftinject: " << s.message() << "\n";
  }
  int status = 0;
  std::string_view ended = "completed";
  switch (r.end) {
    case drill::DrillEnd::completed: status = r.passed ? 0 : kExitFailed; break;
    case drill::DrillEnd::job_ended: status = kExitNoJob; ended = "job_ended"; break;
    case drill::DrillEnd::no_job: status = kExitNoJob; ended = "no_job"; break;
    case drill::DrillEnd::step_failed: status = kExitNoAnswer; ended = "step_failed"; break;
    case drill::DrillEnd::step_refused:
      ended = "step_refused";
      status = r.refusal == base::Errc::not_found ? kExitUnknownRail : r.refusal == base::Errc::unsupported ? kExitRefused : kExitUsage;
      break;
  }
  if (json) {
    print_json_result(r, ended);
  } else if (r.end == drill::DrillEnd::completed) {
    std::cout << "drill " << file << " on job " << r.timeline.header.job << ": " << r.timeline.steps.size()
              << " steps, " << (r.passed ? "every expectation held" : "FAILED") << "\n";
    print_verdict(r.timeline);
  }
  if (r.end != drill::DrillEnd::completed) std::cerr << "ftinject: drill stopped: " << r.message << "\n";
  if (!timeline_out.empty()) std::cerr << "ftinject: timeline written to " << timeline_out << "\n";
  return status;
}

int show_timeline(const std::string& file, const std::string& svg_out, bool json) {
  auto t = drill::read_timeline(file);
  if (!t) fail(t.code() == base::Errc::not_found ? kExitUsage : kExitFailed, t.status().message());
  if (!svg_out.empty()) {
    if (auto s = base::write_file(svg_out, drill::timeline_svg(*t)); !s) fail(kExitFailed, s.message());
    std::cerr << "ftinject: picture written to " << svg_out << "\n";
    return 0;
  }
  std::cout << (json ? drill::to_json_lines(*t) : drill::timeline_text(*t));
  return 0;
}

int run(int argc, char** argv) {
  // Everything after "--" is the command a drill launches.
  std::vector<std::string> command;
  int own = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      own = i;
      for (int k = i + 1; k < argc; ++k) command.emplace_back(argv[k]);
      break;
    }
  }
  CLI::App app{"ftinject: inject faults into a running ftmpi job, and run fault drills", "ftinject"};
  app.set_help_flag();
  bool help = false;
  std::vector<std::string> words;
  std::string ranks, rail, lasts, timeout, job, timeline_out, svg_out, done_file, poll;
  bool json = false;
  app.add_flag("-h,--help", help, "This help");
  app.add_option("words", words, "[JOB] SPEC | clear | status | drill FILE | timeline FILE");
  app.add_option("--rank,--ranks", ranks, "The ranks that act: 0,2,5-7 (default every rank)");
  app.add_option("--rail", rail, "The rail: its index, or its interface or address (default every rail)");
  app.add_option("--for", lasts, "How long the fault lasts (2s, 500ms); default until 'clear'");
  app.add_option("--timeout", timeout, "How long ftrun waits for the ranks' answers (default 2s)");
  app.add_option("--job", job, "drill: the running job to drill");
  app.add_option("--timeline", timeline_out, "drill: write the timeline (zstd JSON lines) here");
  app.add_option("--svg", svg_out, "drill, timeline: draw the timeline as SVG here");
  app.add_option("--done-file", done_file, "drill: create this file once the last step's effect has ended");
  app.add_option("--poll", poll, "drill: how often the job's statistics are read (default 200ms)");
  app.add_flag("--json", json, "JSON on stdout instead of a table");
  try {
    app.parse(own, argv);
  } catch (const CLI::ParseError& e) {
    fail(kExitUsage, std::string(e.what()) + " (see ftinject --help)");
  }
  if (help) {
    std::cout << kUsage;
    return 0;
  }
  if (words.empty()) fail(kExitUsage, "say what to do: a SPEC, clear, status, drill or timeline (see ftinject --help)");
  const bool drill_like = words[0] == "drill" || words[0] == "timeline";
  if (!drill_like && !command.empty()) fail(kExitUsage, "'--' and a command belong to 'ftinject drill'");
  if (drill_like) {
    if (words.size() != 2) fail(kExitUsage, "ftinject " + words[0] + " FILE: name one file");
    if (!ranks.empty() || !rail.empty() || !lasts.empty()) {
      fail(kExitUsage, "--rank, --rail and --for belong to an injection; a drill file says them per step");
    }
    if (words[0] == "timeline") return show_timeline(words[1], svg_out, json);
    return run_drill(words[1], command, job, json, timeline_out, svg_out, done_file, poll);
  }
  if (!job.empty() || !timeline_out.empty() || !svg_out.empty() || !done_file.empty() || !poll.empty()) {
    fail(kExitUsage, "--job, --timeline, --svg, --done-file and --poll belong to 'ftinject drill'");
  }
  if (words.size() > 2) fail(kExitUsage, "too many words: ftinject [JOB] SPEC|clear|status");
  const std::string which = words.size() == 2 ? words[0] : "";
  const std::string& what = words.back();
  if (what == "status") {
    if (!rail.empty() || !lasts.empty()) fail(kExitUsage, "status takes no --rail or --for");
    return status(which, ranks, timeout, json);
  }
  if (what == "clear") {
    if (!lasts.empty()) fail(kExitUsage, "clear takes no --for");
    return clear(which, ranks, rail, timeout, json);
  }
  return inject(which, what, ranks, rail, lasts, timeout, json);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Failure& f) {
    std::cerr << "ftinject: " << f.message << "\n";
    return f.status;
  }
}
