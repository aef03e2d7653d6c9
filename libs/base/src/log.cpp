#include "ftmpi/base/log.hpp"

#include <memory>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ftmpi::base {
namespace {

constexpr ParamRow kBaseParams[] = {kLogLevel};

std::shared_ptr<spdlog::logger> make_logger(std::string_view who, spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto log = std::make_shared<spdlog::logger>(std::string(who), std::move(sink));
  log->set_pattern("[%n] %l: %v");
  log->set_level(level);
  return log;
}

std::shared_ptr<spdlog::logger>& process_logger() {
  static std::shared_ptr<spdlog::logger> log = make_logger("ftmpi", spdlog::level::warn);
  return log;
}

}  // namespace

std::span<const ParamRow> base_params() noexcept { return kBaseParams; }

Status init_logging(std::string_view who, std::string_view level) {
  if (Status s = validate(kLogLevel, level); !s) return s;
  process_logger() = make_logger(who, spdlog::level::from_str(std::string(level)));
  return {};
}

spdlog::logger& logger() { return *process_logger(); }

}  // namespace ftmpi::base
