// Logging: one spdlog logger per process, every line prefixed with who is speaking ("rank 3", "ftrun").
#pragma once

#include <span>
#include <string_view>

#include <spdlog/logger.h>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

inline constexpr ParamRow kLogLevel{"base.log.level", ParamType::string, "warn",
                                    "least severe log message printed", ParamLevel::basic,
                                    ParamScope::rank, "trace|debug|info|warn|error|off"};

// This library's parameter table.
std::span<const ParamRow> base_params() noexcept;

// (Re)configures the process logger. `level` must be one of kLogLevel's choices.
Status init_logging(std::string_view who, std::string_view level);

// The process logger; before init_logging it logs warnings and worse as "ftmpi".
spdlog::logger& logger();

}  // namespace ftmpi::base
