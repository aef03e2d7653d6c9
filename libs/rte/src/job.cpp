#include "ftmpi/rte/job.hpp"

#include <dirent.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>

#include "sys.hpp"

namespace ftmpi::rte {

std::optional<std::string_view> environment_value(char** envp, std::string_view name) {
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

namespace {

using base::Errc;
using base::Result;
using base::Status;

constexpr std::string_view kJobEnvironmentNames[] = {kEnvRank,  kEnvLocalRank, kEnvLocalSize, kEnvSize,
                                                     kEnvJobId, kEnvJobKey,    kEnvRteAddr,   kEnvRteSecret};

Status fill_random(void* data, std::size_t n) {
  auto* bytes = static_cast<unsigned char*>(data);
  while (n > 0) {
    ssize_t got = getrandom(bytes, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return sys::errno_status(Errc::internal, "getrandom");
    }
    bytes += got;
    n -= static_cast<std::size_t>(got);
  }
  return {};
}

std::string to_hex(const std::uint8_t* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

std::string u64_hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Looks up a variable FTMPI_RANK says must be there.
Result<std::string_view> required(char** envp, std::string_view name) {
  auto value = environment_value(envp, name);
  if (!value) {
    return Status(Errc::invalid_argument,
                  std::string(name) + " is not set, but " + std::string(kEnvRank) +
                      " is: this program expects to be started by ftrun (run it with ftrun, or unset " +
                      std::string(kEnvRank) + " to run it as a single process)");
  }
  return *value;
}

Status malformed(std::string_view name, std::string_view value, std::string_view expected) {
  return Status(Errc::invalid_argument,
                std::string(name) + "='" + std::string(value) + "' is not " + std::string(expected));
}

Result<std::uint32_t> env_u32(char** envp, std::string_view name) {
  auto text = required(envp, name);
  if (!text) return text.status();
  std::uint32_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty()) {
    return malformed(name, *text, "a non-negative integer");
  }
  return value;
}

Result<std::uint64_t> env_u64_hex(char** envp, std::string_view name) {
  auto text = required(envp, name);
  if (!text) return text.status();
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value, 16);
  if (text->size() != 16 || ec != std::errc() || end != text->data() + text->size()) {
    return malformed(name, *text, "16 hexadecimal digits");
  }
  return value;
}

Result<Secret> env_secret(char** envp, std::string_view name) {
  auto text = required(envp, name);
  if (!text) return text.status();
  Secret secret{};
  bool ok = text->size() == 2 * secret.size();
  for (std::size_t i = 0; ok && i < secret.size(); ++i) {
    auto [end, ec] = std::from_chars(text->data() + 2 * i, text->data() + 2 * i + 2, secret[i], 16);
    ok = ec == std::errc() && end == text->data() + 2 * i + 2;
  }
  if (!ok) return malformed(name, *text, "64 hexadecimal digits");
  return secret;
}

}  // namespace

std::span<const std::string_view> job_environment_names() noexcept { return kJobEnvironmentNames; }

Result<Secret> secret_from_environment(char** envp) { return env_secret(envp, kEnvRteSecret); }

bool secrets_equal(const Secret& a, const Secret& b) noexcept {
  // Accumulate every difference; a volatile sink keeps the compiler from ending the loop early.
  volatile std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = static_cast<std::uint8_t>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

std::string secret_text(const Secret& secret) { return to_hex(secret.data(), secret.size()); }

Result<JobIdentity> make_job_identity() {
  JobIdentity id;
  if (Status s = fill_random(&id.job_id, sizeof id.job_id); !s) return s;
  while (id.job_key == 0) {
    if (Status s = fill_random(&id.job_key, sizeof id.job_key); !s) return s;
  }
  if (Status s = fill_random(id.secret.data(), id.secret.size()); !s) return s;
  return id;
}

Result<JobInfo> singleton_job() {
  auto id = make_job_identity();
  if (!id) return id.status();
  JobInfo job;
  job.identity = *id;
  return job;
}

std::vector<std::string> job_environment(const JobInfo& job) {
  auto var = [](std::string_view name, const std::string& value) { return std::string(name) + "=" + value; };
  return {
      var(kEnvRank, std::to_string(job.rank)),
      var(kEnvSize, std::to_string(job.size)),
      var(kEnvLocalRank, std::to_string(job.local_rank)),
      var(kEnvLocalSize, std::to_string(job.local_size)),
      var(kEnvJobId, u64_hex(job.identity.job_id)),
      var(kEnvJobKey, u64_hex(job.identity.job_key)),
      var(kEnvRteAddr, job.launcher_address),
      var(kEnvRteSecret, secret_text(job.identity.secret)),
  };
}

Result<std::optional<JobInfo>> job_from_environment(char** envp) {
  if (!environment_value(envp, kEnvRank)) return std::optional<JobInfo>();
  JobInfo job;
  auto rank = env_u32(envp, kEnvRank);
  auto size = env_u32(envp, kEnvSize);
  auto local_rank = env_u32(envp, kEnvLocalRank);
  auto local_size = env_u32(envp, kEnvLocalSize);
  auto job_id = env_u64_hex(envp, kEnvJobId);
  auto job_key = env_u64_hex(envp, kEnvJobKey);
  auto addr = required(envp, kEnvRteAddr);
  auto secret = env_secret(envp, kEnvRteSecret);
  for (const Status& s : {rank.status(), size.status(), local_rank.status(), local_size.status(),
                          job_id.status(), job_key.status(), addr.status(), secret.status()}) {
    if (!s) return s;
  }
  if (*size == 0 || *size > kMaxJobSize) {
    return malformed(kEnvSize, std::to_string(*size), "a job size from 1 to " + std::to_string(kMaxJobSize));
  }
  if (*rank >= *size) return malformed(kEnvRank, std::to_string(*rank), "below FTMPI_SIZE");
  if (*local_size == 0 || *local_size > *size) {
    return malformed(kEnvLocalSize, std::to_string(*local_size), "from 1 to FTMPI_SIZE");
  }
  if (*local_rank >= *local_size) {
    return malformed(kEnvLocalRank, std::to_string(*local_rank), "below FTMPI_LOCAL_SIZE");
  }
  if (*job_key == 0) return malformed(kEnvJobKey, "0000000000000000", "a job key (never 0)");
  if (auto list = parse_launcher_addresses(*addr); !list) {
    return malformed(kEnvRteAddr, *addr, "a comma-separated list of host:port");
  }
  job.rank = *rank;
  job.size = *size;
  job.local_rank = *local_rank;
  job.local_size = *local_size;
  job.identity = {*job_id, *job_key, *secret};
  job.launcher_address = std::string(*addr);
  return std::optional<JobInfo>(std::move(job));
}

Result<std::vector<std::string>> parse_launcher_addresses(std::string_view list) {
  std::vector<std::string> out;
  while (true) {
    const auto comma = list.find(',');
    const std::string_view entry = list.substr(0, comma);
    if (auto hp = sys::split_host_port(entry); !hp) return hp.status();
    out.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

std::string join_launcher_addresses(std::span<const std::string> addresses) {
  std::string out;
  for (const std::string& a : addresses) {
    if (!out.empty()) out += ',';
    out += a;
  }
  return out;
}

Result<std::vector<std::string>> listen_addresses_for(std::span<const std::string> remote_hosts, bool local_ranks) {
  std::vector<std::string> out;
  const auto add = [&](std::string address) {
    if (std::find(out.begin(), out.end(), address) == out.end()) out.push_back(std::move(address));
  };
  for (const std::string& host : remote_hosts) {
    auto local = sys::local_address_towards(host);
    if (!local) return local.status();
    add(std::move(*local));
  }
  if (local_ranks) add("127.0.0.1");
  return out;
}

bool is_wildcard_address(std::string_view address) noexcept {
  return address == "0.0.0.0" || address == "::";
}

Result<std::vector<std::string>> advertised_addresses(std::span<const std::string> listen_addresses,
                                                     std::uint16_t port) {
  std::vector<std::string> out;
  const auto add = [&](std::string_view address) {
    std::string entry = sys::join_host_port(address, port);
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(std::move(entry));
  };
  for (const std::string& listen_address : listen_addresses) {
    if (!is_wildcard_address(listen_address)) {
      add(listen_address);
      continue;
    }
    auto interfaces = sys::ipv4_interface_addresses();
    if (!interfaces) return interfaces.status();
    for (const std::string& a : *interfaces) add(a);
    add("127.0.0.1");
  }
  return out;
}

std::string shm_prefix(std::uint64_t job_id) { return "ftmpi-" + u64_hex(job_id) + "-"; }

Result<std::size_t> remove_shared_memory(std::uint64_t job_id) {
  constexpr const char* kDir = "/dev/shm";
  const std::string prefix = shm_prefix(job_id);
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(kDir), closedir);
  if (!dir) {
    if (errno == ENOENT) return std::size_t{0};
    return sys::errno_status(Errc::io_error, std::string("cannot list ") + kDir);
  }
  std::size_t removed = 0;
  Status first_error;
  while (dirent* entry = readdir(dir.get())) {
    std::string_view name(entry->d_name);
    if (!name.starts_with(prefix)) continue;
    const std::string path = std::string(kDir) + "/" + std::string(name);
    if (unlinkat(dirfd(dir.get()), entry->d_name, 0) == 0) {
      ++removed;
    } else if (errno != ENOENT && first_error) {
      first_error = sys::errno_status(Errc::io_error, "cannot remove " + path);
    }
  }
  if (!first_error) return first_error;
  return removed;
}

}  // namespace ftmpi::rte
