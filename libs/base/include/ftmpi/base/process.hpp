// Running another program to its end with its output captured: what a tool does when it drives ftrun or
// another MPI's launcher and reads what the job printed (ftbench).
#pragma once

#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

struct Captured {
  int status = 0;   // exit status; 128 + the signal when killed; 127 when the program could not be run
  std::string out;  // all it wrote on stdout
  std::string err;  // all it wrote on stderr
};

// Runs `command` (argv[0] looked up on PATH) with this environment plus `extra_env` ("K=V", replacing a
// variable of the same name), stdin from /dev/null, and waits for it. An error only when it could not be
// started at all (no pipe, no fork): a program that is missing runs and exits 127, saying so on `err`.
Result<Captured> run_captured(const std::vector<std::string>& command, const std::vector<std::string>& extra_env = {});

}  // namespace ftmpi::base
