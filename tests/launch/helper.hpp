// Start-up shared by the helper rank programs of the launch tests.
#pragma once

#include <cstdint>
#include <string_view>

#include "ftmpi/rte/client.hpp"

namespace ftmpi::launch_test {

// The environment variable naming the directory where each rank writes "<rank>.pid" (not FTMPI_*, so
// that no parameter table sees it).
inline constexpr const char* kPidDirEnv = "RTE_TEST_PID_DIR";

// Loads parameters from the environment, connects to ftrun (or becomes a singleton) and writes the pid
// file. Any failure is printed as "<program>: <reason>" and exits with status 99.
rte::Client start_rank(char** envp);
// Writes "<rank>.pid" (start_rank does; for a rank that never connects).
void write_pid_file(std::uint32_t rank);

// Prints "<program>: <what>" to stderr and exits with status 99.
[[noreturn]] void die(std::string_view what);

}  // namespace ftmpi::launch_test
