// The environment: MPI_Init and MPI_Finalize, MPI_Abort, versions, thread level, clocks, host name, memory.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "engine/engine.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/base/threads.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/call.hpp"
#include "mpi/file.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"
#include "mpi/shm_coll.hpp"

namespace ftmpi::mpi {
namespace {
std::vector<std::string_view> not_parameters();
}  // namespace

base::Status load_params(Runtime& rt) {
  if (rt.params_loaded) return {};
  if (rt.params.rows().empty()) {  // an earlier try may have added them and then met a bad variable
    for (std::span<const base::ParamRow> table : ftmpi::params::all_param_tables()) {
      if (base::Status s = rt.params.add_table(table); !s) return s;
    }
  }
  if (base::Status s = rt.params.load_environment(environ, not_parameters()); !s) return s;
  rt.params_loaded = true;
  return {};
}

namespace {

// FTMPI_* variables that are not parameters: what the launcher sets for the engine, and the seed of the
// randomized tests.
std::vector<std::string_view> not_parameters() {
  const std::span<const std::string_view> launcher = rte::job_environment_names();
  std::vector<std::string_view> names(launcher.begin(), launcher.end());
  names.push_back("FTMPI_TEST_SEED");
  return names;
}

// MPI_Init's failures have no error handler yet: one line, and the process ends.
[[noreturn]] void init_failed(std::string_view call, const base::Status& status) {
  const std::string reason = status.message().empty() ? status.to_string() : status.message();
  std::fprintf(stderr, "ftmpi: %.*s: %s\n", static_cast<int>(call.size()), call.data(), reason.c_str());
  std::exit(EXIT_FAILURE);
}

void start_runtime(std::string_view call) {
  Runtime& rt = runtime();
  if (base::Status s = load_params(rt); !s) init_failed(call, s);
  const std::string level = rt.params.get_string(base::kLogLevel);
  // Until the engine knows our rank the logger cannot say it.
  if (base::Status s = base::init_logging("ftmpi", level); !s) init_failed(call, s);
  auto started = engine::Engine::start(rt.params);
  if (!started) init_failed(call, started.status());
  rt.engine = std::move(*started);
  engine::Engine& e = *rt.engine;
  if (base::Status s = base::init_logging(fmt::format("rank {}", e.world_rank()), level); !s) init_failed(call, s);

  auto tuning = coll::tuning_from(rt.params);
  if (!tuning) init_failed(call, tuning.status());
  rt.tuning = *tuning;
  // The engine's contexts for MPI_COMM_WORLD and MPI_COMM_SELF are below kFirstFreeContext; their
  // collectives take the first two free ids, which every process reserves alike.
  set_up_comm(rt.comms[0], MPI_COMM_WORLD, "MPI_COMM_WORLD", e.world_context(), e.world_rank(), e.world_size(), {});
  set_up_comm(rt.comms[1], MPI_COMM_SELF, "MPI_COMM_SELF", e.self_context(), 0, 1, {e.world_rank()});
  rt.comms[0].coll_view.context = engine::kFirstFreeContext;
  rt.comms[1].coll_view.context = engine::kFirstFreeContext + 1;
  rt.next_context = engine::kFirstFreeContext + 2;
  rt.next_eager_context = kEagerContexts;
  rt.main_thread = std::this_thread::get_id();
  rt.phase = Phase::running;
}

// MPI_INFO_ENV (MPI-3.1 section 9.1.2): how this process was started, from the command line given
// (MPI_Info_create_env's argc/argv) or else from what the system says of it. maxprocs and thread_level
// only once MPI runs.
Info environment_info(const Runtime& rt, int argc, char** argv) {
  Info env;
  std::vector<std::string> words;
  if (argc > 0 && argv != nullptr) {
    for (int i = 0; i < argc && argv[i] != nullptr; ++i) words.emplace_back(argv[i]);
  } else {
    std::string cmdline;
    if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
      char buf[4096];
      std::size_t n = 0;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) cmdline.append(buf, n);
      std::fclose(f);
    }
    for (std::size_t start = 0; start < cmdline.size();) {
      const std::size_t end = cmdline.find('\0', start);
      words.push_back(cmdline.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  if (!words.empty()) env.entries.emplace_back("command", words.front());
  std::string arguments;
  for (std::size_t i = 1; i < words.size(); ++i) arguments += (i > 1 ? " " : "") + words[i];
  env.entries.emplace_back("argv", arguments);
  const bool running = rt.phase == Phase::running;
  if (running) env.entries.emplace_back("maxprocs", std::to_string(engine().world_size()));
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) env.entries.emplace_back("host", host);
  char cwd[4096] = {};
  if (::getcwd(cwd, sizeof cwd) != nullptr) env.entries.emplace_back("wdir", cwd);
  constexpr const char* kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                     "MPI_THREAD_MULTIPLE"};
  if (running) env.entries.emplace_back("thread_level", kLevels[rt.thread_level]);
  return env;
}

void set_info_env(Runtime& rt) {
  rt.infos.put(*handle_index(MPI_INFO_ENV, HandleKind::info), environment_info(rt, 0, nullptr));
}

int init(std::string_view name, int required, int* provided) {
  // A second MPI_Init after MPI_Finalize is one more call after MPI_Finalize.
  if (runtime().phase == Phase::finalized) require_running(name);
  return api_call(
      name,
      [&](Call& call) {
        if (!check_arg(call, provided, "provided")) return;
        Runtime& rt = runtime();
        if (rt.phase == Phase::running) {
          call.fail(MPI_ERR_OTHER, "MPI is initialized already");
          return;
        }
        // Every level: the library keeps no per-thread state, so FUNNELED and SERIALIZED need nothing
        // more than SINGLE; MULTIPLE takes the thread lock in every call from now on (thread_lock.hpp),
        // and the engine's and paths' locks (base::multi_threaded), switched on before the engine
        // starts its own threads.
        rt.thread_level = std::clamp(required, int{MPI_THREAD_SINGLE}, int{MPI_THREAD_MULTIPLE});
        if (rt.thread_level == MPI_THREAD_MULTIPLE) base::enable_multi_threaded();
        start_runtime(name);
        if (rt.thread_level == MPI_THREAD_MULTIPLE) ThreadLock::enable();
        *provided = rt.thread_level;
        set_info_env(rt);
      },
      Needs::nothing);
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Init(int* /*argc*/, char*** /*argv*/) {
  int provided = MPI_THREAD_SINGLE;
  return init("MPI_Init", MPI_THREAD_SINGLE, &provided);
}
#pragma weak MPI_Init = PMPI_Init

int PMPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required, int* provided) {
  return init("MPI_Init_thread", required, provided);
}
#pragma weak MPI_Init_thread = PMPI_Init_thread

int PMPI_Finalize(void) {
  const int result = api_call("MPI_Finalize", [](Call& call) {
    // First, while MPI still works: MPI_COMM_SELF's attributes are deleted, the last set first (MPI-3.1
    // section 8.7.1), so that libraries clean up through their delete callbacks. A callback that fails
    // is reported, and finalizing goes on (the other ranks wait for this one's fence).
    if (Comm* self = find_comm(MPI_COMM_SELF)) delete_attributes(call, self->handle, self->attributes, true);
    close_files_at_finalize();  // files left open: reported, not closed silently
    runtime().bsend.drain(engine());
    for (Comm& c : runtime().comms) {
      if (c.bsend != nullptr) c.bsend->drain(engine());
    }
    // Before the engine stops: a rank may still need a resend of a broadcast this rank wrote.
    release_all_shm_colls();
    if (ftmpi::base::Status s = engine().finalize(); !s) call.fail(s);
  });
  const ThreadLockGuard lock;  // a thread may still ask MPI_Finalized
  Runtime& rt = runtime();
  if (rt.engine != nullptr) rt.final_counters = rt.engine->counters_snapshot();
  rt.engine.reset();
  rt.phase = Phase::finalized;
  return result;
}
#pragma weak MPI_Finalize = PMPI_Finalize

int PMPI_Initialized(int* flag) {
  return api_call(
      "MPI_Initialized",
      [&](Call& call) {
        if (check_arg(call, flag, "flag")) *flag = runtime().phase != Phase::before_init;
      },
      Needs::nothing);
}
#pragma weak MPI_Initialized = PMPI_Initialized

int PMPI_Finalized(int* flag) {
  return api_call(
      "MPI_Finalized",
      [&](Call& call) {
        if (check_arg(call, flag, "flag")) *flag = runtime().phase == Phase::finalized;
      },
      Needs::nothing);
}
#pragma weak MPI_Finalized = PMPI_Finalized

int PMPI_Query_thread(int* provided) {
  return api_call("MPI_Query_thread", [&](Call& call) {
    if (check_arg(call, provided, "provided")) *provided = runtime().thread_level;
  });
}
#pragma weak MPI_Query_thread = PMPI_Query_thread

int PMPI_Is_thread_main(int* flag) {
  return api_call("MPI_Is_thread_main", [&](Call& call) {
    if (check_arg(call, flag, "flag")) *flag = std::this_thread::get_id() == runtime().main_thread;
  });
}
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main

// The launcher reports the abort and its code; nothing to print here.
int PMPI_Abort(MPI_Comm /*comm*/, int errorcode) {
  require_running("MPI_Abort");
  const ThreadLockGuard lock;  // the engine may be busy in another thread's call
  engine().abort(errorcode, {});
  std::abort();  // not reached; g++ does not apply [[noreturn]] through the virtual call
}
#pragma weak MPI_Abort = PMPI_Abort

int PMPI_Get_processor_name(char* name, int* resultlen) {
  return api_call("MPI_Get_processor_name", [&](Call& call) {
    if (!check_arg(call, name, "name") || !check_arg(call, resultlen, "resultlen")) return;
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) {
      call.fail(MPI_ERR_OTHER, fmt::format("gethostname: {}", std::strerror(errno)));
      return;
    }
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';  // gethostname need not terminate a truncated name
    *resultlen = static_cast<int>(std::strlen(name));
  });
}
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name

int PMPI_Get_version(int* version, int* subversion) {
  return api_call(
      "MPI_Get_version",
      [&](Call& call) {
        if (!check_arg(call, version, "version") || !check_arg(call, subversion, "subversion")) return;
        *version = MPI_VERSION;
        *subversion = MPI_SUBVERSION;
      },
      Needs::nothing);
}
#pragma weak MPI_Get_version = PMPI_Get_version

int PMPI_Get_library_version(char* version, int* resultlen) {
  return api_call(
      "MPI_Get_library_version",
      [&](Call& call) {
        if (!check_arg(call, version, "version") || !check_arg(call, resultlen, "resultlen")) return;
        const int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "ftmpi %s (MPI %d.%d)",
                                    FTMPI_VERSION, MPI_VERSION, MPI_SUBVERSION);
        *resultlen = std::min(n, MPI_MAX_LIBRARY_VERSION_STRING - 1);
      },
      Needs::nothing);
}
#pragma weak MPI_Get_library_version = PMPI_Get_library_version

// `baseptr` is really a void**: MPI declares it void* so that callers need no cast. Info hints are ignored.
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  return api_call("MPI_Alloc_mem", [&](Call& call) {
    if (!check_arg(call, baseptr, "baseptr") || (info != MPI_INFO_NULL && check_info(call, info) == nullptr)) return;
    if (size < 0) {
      call.fail(MPI_ERR_SIZE, fmt::format("negative size {}", size));
      return;
    }
    void* memory = std::malloc(size == 0 ? 1 : static_cast<std::size_t>(size));
    if (memory == nullptr) {
      call.fail(MPI_ERR_NO_MEM, fmt::format("no memory for {} bytes", size));
      return;
    }
    *static_cast<void**>(baseptr) = memory;
  });
}
#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem

int PMPI_Free_mem(void* base) {
  return api_call("MPI_Free_mem", [&](Call&) { std::free(base); });
}
#pragma weak MPI_Free_mem = PMPI_Free_mem

double PMPI_Wtime(void) {
  require_running("MPI_Wtime");
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#pragma weak MPI_Wtime = PMPI_Wtime

double PMPI_Wtick(void) {
  require_running("MPI_Wtick");
  timespec resolution{};
  clock_getres(CLOCK_MONOTONIC, &resolution);  // the clock behind steady_clock
  return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}
#pragma weak MPI_Wtick = PMPI_Wtick

// For profiling tools (MPI-3.1 section 14.2.4): the library itself has nothing to switch.
int PMPI_Pcontrol(const int /*level*/, ...) { return MPI_SUCCESS; }
#pragma weak MPI_Pcontrol = PMPI_Pcontrol

// MPI-4.0 section 11.4: a new info object like MPI_INFO_ENV, before MPI_Init too (argc/argv as given
// to main, or 0 and NULL to take them from the system).
int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  return api_call(
      "MPI_Info_create_env",
      [&](Call& call) {
        if (argc < 0) {
          call.fail(MPI_ERR_ARG, fmt::format("argc is negative ({})", argc));
          return;
        }
        if (argc > 0 && !check_arg(call, argv, "argv")) return;
        if (check_arg(call, info, "info")) *info = runtime().infos.add(environment_info(runtime(), argc, argv));
      },
      Needs::nothing);
}
#pragma weak MPI_Info_create_env = PMPI_Info_create_env

}  // extern "C"
