// What every fuzz target does when an input breaks one of its rules: say which target, which rule and
// what broke it, then abort, so that libFuzzer keeps the input (and corpus replay fails on it).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ftmpi::fuzz {

[[noreturn]] inline void violated(std::string_view target, const char* rule, std::string_view detail) {
  std::fprintf(stderr, "%.*s: %s: %.*s\n", static_cast<int>(target.size()), target.data(), rule,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace ftmpi::fuzz
