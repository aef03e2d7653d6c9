#include "ftmpi/rte/bootstrap.hpp"

#include <charconv>
#include <string>

#include "ftmpi/rte/client.hpp"
#ifdef FTMPI_HAVE_PMIX
#include "pmix_bootstrap.hpp"
#endif

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

// How many tasks srun started in this step (0 when it does not say): SLURM_STEP_NUM_TASKS, set by srun
// for its step, or else SLURM_NTASKS.
std::uint32_t srun_tasks(char** envp) {
  for (std::string_view name : {kEnvSlurmStepTasks, kEnvSlurmTasks}) {
    auto text = environment_value(envp, name);
    if (!text) continue;
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec == std::errc() && end == text->data() + text->size()) return n;
  }
  return 0;
}

}  // namespace

bool pmix_supported() noexcept {
#ifdef FTMPI_HAVE_PMIX
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<Bootstrap>> bootstrap_from_environment(char** envp, const ClientOptions& options) {
  auto from_ftrun = job_from_environment(envp);
  if (!from_ftrun) return from_ftrun.status();
  if (from_ftrun->has_value()) {
    auto client = Client::connect(**from_ftrun, options);
    if (!client) return client.status();
    return std::unique_ptr<Bootstrap>(std::make_unique<Client>(std::move(*client)));
  }
  if (environment_value(envp, kEnvPmixRank) && environment_value(envp, kEnvPmixNamespace)) {
#ifdef FTMPI_HAVE_PMIX
    return pmix_bootstrap();
#else
    return Status(Errc::unsupported,
                  "this rank was started by a PMIx server (PMIX_RANK is set), but this ftmpi was built without "
                  "PMIx support (libpmix-dev was not found at configure time, or FTMPI_PMIX was OFF): rebuild ftmpi "
                  "with libpmix-dev installed and FTMPI_PMIX on (the default), or launch the program with ftrun");
#endif
  }
  if (environment_value(envp, kEnvSlurmProcId) && srun_tasks(envp) > 1) {
    return Status(Errc::unsupported,
                  "this rank was started by srun without PMIx (SLURM_PROCID is set, PMIX_RANK is not), so it "
                  "cannot find the job's other ranks: launch it with 'srun --mpi=pmix'" +
                      std::string(pmix_supported() ? "" : " (after rebuilding ftmpi with libpmix-dev installed)") +
                      ", or with ftrun (inside the allocation: 'ftrun -n N ./program')");
  }
  auto singleton = Client::singleton();
  if (!singleton) return singleton.status();
  return std::unique_ptr<Bootstrap>(std::make_unique<Client>(std::move(*singleton)));
}

}  // namespace ftmpi::rte
