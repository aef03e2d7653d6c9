// The path driver registry: every kind of path a job can start (shm, udp; verbs next), what each needs and
// can do, and the one start-up sequence they all follow (docs/architecture.md, "Paths").
//
// A driver registers its kind, a one-line summary (ftrun's --paths help), its parameter rows, its
// capabilities, and how to open it. Opening gives an Endpoint: this rank's share of the driver (one path
// per rail) with a local address blob to publish. start_drivers() then runs the same exchange for every
// driver, all of them at once: publish each blob under its driver's kind, fence, read each peer's blob and
// connect to it, fence, finish. Two fences in all however many drivers start (each fence is a round trip
// of every rank through the launcher). Every rank calls it for the same drivers, so the fences line up.
//
// Adding a driver: a folder under src/ with a Driver subclass, one line in kDrivers (registry.cpp); the
// CMake glob picks the folder up. The loop path is not here: it joins ranks inside one test process and
// has nothing to exchange (engine tests build it directly).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::path {

// The launcher's key-value store among the ranks of a job (rte::Client in a real job): a rank's values are
// visible to the others after the next fence, which every rank must enter.
class AddressExchange {
 public:
  virtual base::Status put(std::string_view key, std::string_view value) = 0;
  virtual base::Status fence() = 0;
  virtual base::Result<std::string> get(Rank rank, std::string_view key) = 0;

 protected:
  ~AddressExchange() = default;
};

// What a driver's start-up knows of the job.
struct JobView {
  Rank rank = 0;
  Rank size = 1;
  std::vector<Rank> local;  // the ranks on this host, ascending, this one included
  bool one_host = true;     // every rank of the job is on this host
  std::string shm_prefix;   // the job's prefix for names of shared objects ("ftmpi-<job>-")
  const base::ParamSet* params = nullptr;
};

struct DriverCaps {
  bool host_local = false;  // reaches ranks on this host only (shared memory); preferred there
  bool rails = false;       // one path per rail an operator can break: fault injection applies
};

// One driver's share of this rank's start-up.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // Published to every rank under the driver's kind.
  virtual std::string address() const = 0;
  // After the first fence: connects to a peer from the address it published (for each peer the driver
  // is to reach, this rank included when it is one of them).
  virtual base::Status connect(Rank peer, std::string_view address) = 0;
  // After every connect, before the second fence.
  virtual base::Status connected() { return {}; }
  // After the second fence: every rank has connected.
  virtual base::Status finish() { return {}; }
  // This rank's paths, one per rail (rail k talks to rail k of every rank), null where a rail does not
  // work here.
  virtual std::vector<std::unique_ptr<Path>> take_paths() = 0;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string_view kind() const noexcept = 0;
  virtual std::string_view summary() const noexcept = 0;
  virtual DriverCaps caps() const noexcept = 0;
  virtual std::span<const base::ParamRow> params() const noexcept = 0;
  // Opens this rank's endpoint: binds sockets, creates what one rank of the host creates, ...
  virtual base::Result<std::unique_ptr<Endpoint>> open(const JobView& job) const = 0;
};

// Every registered driver, in preference order (host-local first).
std::span<const Driver* const> drivers() noexcept;
const Driver* find_driver(std::string_view kind) noexcept;
// "shm, udp": the kinds, for messages and help.
std::string driver_kinds();
// A comma-separated list of kinds (path.kinds, ftrun --paths) as drivers in registry order; an unknown
// or repeated kind, or an empty list, is invalid_argument naming the known kinds.
base::Result<std::vector<const Driver*>> parse_driver_kinds(std::string_view text);

// A driver to start and the ranks it is to reach (by rank: true to connect).
struct DriverStart {
  const Driver* driver = nullptr;
  std::vector<bool> peers;
};

// Opens every driver and wires each to its peers through `exchange`: publish, fence, connect, fence,
// finish. Returns each driver's paths, in the order given, one per rail (null where a rail does not work).
base::Result<std::vector<std::vector<std::unique_ptr<Path>>>> start_drivers(std::span<const DriverStart> starts,
                                                                             const JobView& job,
                                                                             AddressExchange& exchange);

}  // namespace ftmpi::path
