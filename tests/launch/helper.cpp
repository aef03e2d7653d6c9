#include "helper.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/rte/params.hpp"

namespace ftmpi::launch_test {

void die(std::string_view what) {
  std::fprintf(stderr, "%s: %.*s\n", program_invocation_short_name, static_cast<int>(what.size()),
               what.data());
  std::exit(99);
}

rte::Client start_rank(char** envp) {
  base::ParamSet params;
  if (!params.add_table(base::base_params()) || !params.add_table(rte::rte_params())) die("parameter tables");
  if (base::Status s = params.load_environment(envp, rte::job_environment_names()); !s) die(s.to_string());
  if (base::Status s = base::init_logging(program_invocation_short_name, params.get_string(base::kLogLevel));
      !s) {
    die(s.to_string());
  }
  auto client = rte::Client::from_environment(envp, rte::ClientOptions::from(params));
  if (!client) die(client.status().to_string());
  write_pid_file(client->rank());
  return std::move(*client);
}

void write_pid_file(std::uint32_t rank) {
  const char* dir = std::getenv(kPidDirEnv);
  if (dir == nullptr) return;
  const std::string path = std::string(dir) + "/" + std::to_string(rank) + ".pid";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) die("cannot write " + path);
  std::fprintf(f, "%d\n", static_cast<int>(getpid()));
  std::fclose(f);
}

}  // namespace ftmpi::launch_test
