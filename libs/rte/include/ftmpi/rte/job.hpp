// A job's identity and the environment contract between ftrun and its ranks (docs/ftrun.md).
//
// ftrun starts every rank with these variables set; a process started without them (FTMPI_RANK unset)
// is a singleton: rank 0 of 1, with no launcher.
//
//   FTMPI_RANK, FTMPI_SIZE               this rank and the number of ranks in the job
//   FTMPI_LOCAL_RANK, FTMPI_LOCAL_SIZE   the same among the ranks on this host
//   FTMPI_JOB_ID                         random 64-bit job id, 16 hex digits (names shared-memory segments)
//   FTMPI_JOB_KEY                        random 64-bit key every wire frame carries, 16 hex digits
//   FTMPI_RTE_ADDR                       ftrun's control listener: a comma-separated list of addresses,
//                                        each "host:port" or "[v6 address]:port", tried in order
//                                        ("10.0.0.1:4000,192.168.1.5:4000,127.0.0.1:4000")
//   FTMPI_RTE_SECRET                     per-job secret that authenticates a rank to ftrun, 64 hex digits
//
// FTMPI_RTE_ADDR lists every address at which ftrun listens, all with the same port. With ranks on other
// hosts (and rte.listen_address unset) that is, for each such host, the address of ftrun's host that the
// route to it leaves from, then 127.0.0.1 (listen_addresses_for); with rte.listen_address 0.0.0.0 or ::
// (or a host name that does not resolve on ftrun's host, such as an ssh alias),
// every non-loopback IPv4 address of ftrun's host that is up, in interface order, then 127.0.0.1;
// otherwise the one address ftrun is bound to. A rank tries them in order, a short while each
// (Client::connect).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

inline constexpr std::string_view kEnvRank = "FTMPI_RANK";
inline constexpr std::string_view kEnvSize = "FTMPI_SIZE";
inline constexpr std::string_view kEnvLocalRank = "FTMPI_LOCAL_RANK";
inline constexpr std::string_view kEnvLocalSize = "FTMPI_LOCAL_SIZE";
inline constexpr std::string_view kEnvJobId = "FTMPI_JOB_ID";
inline constexpr std::string_view kEnvJobKey = "FTMPI_JOB_KEY";
inline constexpr std::string_view kEnvRteAddr = "FTMPI_RTE_ADDR";
inline constexpr std::string_view kEnvRteSecret = "FTMPI_RTE_SECRET";

// Every variable above: pass to base::ParamSet::load_environment as `ignored_env`, since they are
// FTMPI_* variables that name no parameter.
std::span<const std::string_view> job_environment_names() noexcept;

// The largest job one launcher serves; bounds every rank number on the wire.
inline constexpr std::uint32_t kMaxJobSize = 4096;

using Secret = std::array<std::uint8_t, 32>;

// Compares in time independent of where the secrets differ, so a rank-side attacker cannot learn a
// prefix of the secret by timing ftrun's answers.
bool secrets_equal(const Secret& a, const Secret& b) noexcept;

struct JobIdentity {
  std::uint64_t job_id = 0;
  std::uint64_t job_key = 0;  // never 0
  Secret secret{};
};

// The secret as FTMPI_RTE_SECRET carries it: 64 lowercase hex digits.
std::string secret_text(const Secret& secret);

// A fresh identity from the kernel's random source (getrandom).
base::Result<JobIdentity> make_job_identity();

struct JobInfo {
  std::uint32_t rank = 0;
  std::uint32_t size = 1;
  std::uint32_t local_rank = 0;
  std::uint32_t local_size = 1;
  JobIdentity identity;
  std::string launcher_address;  // FTMPI_RTE_ADDR's list, as text; empty for a singleton
};

// Splits an FTMPI_RTE_ADDR list into its addresses; an empty list, an empty entry or one that is not
// host:port is an error.
base::Result<std::vector<std::string>> parse_launcher_addresses(std::string_view list);
std::string join_launcher_addresses(std::span<const std::string> addresses);

// What FTMPI_RTE_ADDR lists for listeners bound to `listen_addresses` (numeric), all on `port`: each
// address in turn, and for a wildcard (0.0.0.0 or ::) this host's non-loopback IPv4 addresses, then
// 127.0.0.1 (each once).
base::Result<std::vector<std::string>> advertised_addresses(std::span<const std::string> listen_addresses,
                                                            std::uint16_t port);

// The addresses ftrun listens on for ranks on `remote_hosts` (names as the operator gave them) and, with
// `local_ranks`, on this host: for each remote host the address of this host that the route to it uses
// (nothing else of this host is reachable to it anyway), then 127.0.0.1; each once. A host that does not
// resolve here is an error naming it.
base::Result<std::vector<std::string>> listen_addresses_for(std::span<const std::string> remote_hosts,
                                                            bool local_ranks);

// Whether a numeric address is the wildcard (0.0.0.0 or ::): listening there reaches every interface.
bool is_wildcard_address(std::string_view address) noexcept;

// The job of a process started without ftrun: rank 0 of 1 with a fresh identity and no launcher.
base::Result<JobInfo> singleton_job();

// The contract's variables for one rank, as "NAME=value" strings.
std::vector<std::string> job_environment(const JobInfo& job);

// The value of `name` in an environment block (environ); unset or empty: std::nullopt.
std::optional<std::string_view> environment_value(char** envp, std::string_view name);

// FTMPI_RTE_SECRET of an environment block (environ): an error names the variable when it is missing or
// is not 64 hex digits.
base::Result<Secret> secret_from_environment(char** envp);

// Reads the contract from an environment block (environ). No FTMPI_RANK: std::nullopt (a singleton).
// FTMPI_RANK set but another variable missing or malformed: an error naming the variable, which is how a
// user who started a rank by hand, or with a mangled environment, learns what went wrong.
base::Result<std::optional<JobInfo>> job_from_environment(char** envp);

// Shared-memory segments of a job are named "<prefix><anything>", prefix "ftmpi-<job id, 16 hex>-", so
// that ftrun can remove whatever a failed job left behind.
std::string shm_prefix(std::uint64_t job_id);

// Unlinks every entry of /dev/shm whose name begins with shm_prefix(job_id); returns how many.
base::Result<std::size_t> remove_shared_memory(std::uint64_t job_id);

}  // namespace ftmpi::rte
