// Runtime parameters: each one is a single ParamRow in the library that owns it (docs/architecture.md,
// "Parameters").
//
// A library declares its rows as constants and lists them in one table, e.g.
//
//   inline constexpr base::ParamRow kUdpMtu{"path.udp.mtu", base::ParamType::size, "8k",
//                                           "largest UDP frame, header included", ...};
//
// A ParamSet gathers the tables, takes values from the environment (FTMPI_PATH_UDP_MTU) and from
// `ftrun --param path.udp.mtu=9000`, validates each value against its row's type when it is set,
// and renders the help listing. Defaults are written only in the row.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

enum class ParamType : std::uint8_t {
  boolean,   // true/false, yes/no, on/off, 1/0
  integer,   // signed 64-bit
  size,      // bytes, with optional k/m/g suffix (powers of 1024)
  duration,  // ns/us/ms/s suffix; a bare number is microseconds
  real,      // floating point
  string,    // free text; choices, if any, are listed in `choices` separated by '|'
};

enum class ParamLevel : std::uint8_t { basic, advanced, debug };

// job: must be equal on every rank (checked at wire-up); rank: may differ per process.
enum class ParamScope : std::uint8_t { rank, job };

struct ParamRow {
  std::string_view name;           // dotted: "<lib>.<component>.<what>"
  ParamType type;
  std::string_view default_value;  // with units: "8k", "200us"
  std::string_view help;           // one line
  ParamLevel level = ParamLevel::basic;
  ParamScope scope = ParamScope::rank;
  std::string_view choices = {};  // for strings: "crc32c|sum32|none"; empty means free text
};

std::string_view to_string(ParamType type) noexcept;
std::string_view to_string(ParamLevel level) noexcept;
std::string_view to_string(ParamScope scope) noexcept;

// "path.udp.mtu" -> "FTMPI_PATH_UDP_MTU"
std::string env_name(std::string_view dotted);

Result<bool> parse_bool(std::string_view text);
Result<std::int64_t> parse_integer(std::string_view text);
Result<std::uint64_t> parse_size(std::string_view text);
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);
Result<double> parse_real(std::string_view text);

// Checks `text` against the row's type (and choices). Returns the reason when it does not fit.
Status validate(const ParamRow& row, std::string_view text);

// Variables with this prefix belong to test harnesses (FTMPI_TEST_SEED), never to parameters.
inline constexpr std::string_view kTestEnvPrefix = "FTMPI_TEST_";

class ParamSet {
 public:
  // Registers a library's table. A duplicate name or an invalid default is a programming error.
  Status add_table(std::span<const ParamRow> rows);

  // Sets a value from the command line or a control message: unknown names and bad values are refused.
  Status set(std::string_view name, std::string_view value);
  // Parses "name=value".
  Status set_assignment(std::string_view assignment);
  // Reads every FTMPI_* variable that names a registered parameter; a FTMPI_* variable that names none
  // is reported so that a typo is not silently ignored. FTMPI_ variables in `ignored_env` and those
  // beginning with kTestEnvPrefix are skipped.
  Status load_environment(char** envp, std::span<const std::string_view> ignored_env = {});

  const ParamRow* find(std::string_view name) const;
  const std::vector<const ParamRow*>& rows() const noexcept { return rows_; }
  // The value in effect (override, else default) as text.
  std::string_view text(const ParamRow& row) const;
  bool is_overridden(const ParamRow& row) const;
  // Every overridden value as "name=value", sorted (to pass on to child processes).
  std::vector<std::string> assignments() const;

  // Typed getters. Values were validated when set, and defaults when the table was added.
  bool get_bool(const ParamRow& row) const;
  std::int64_t get_integer(const ParamRow& row) const;
  std::uint64_t get_size(const ParamRow& row) const;
  std::chrono::nanoseconds get_duration(const ParamRow& row) const;
  double get_real(const ParamRow& row) const;
  std::string get_string(const ParamRow& row) const;

  // A table for --help-params: name, type, default, current value if changed, scope, help.
  std::string help_text(ParamLevel max_level = ParamLevel::debug) const;

 private:
  std::vector<const ParamRow*> rows_;
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace ftmpi::base
