// The registered drivers (registry.cpp lists them), each defined in its own folder.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/path/registry.hpp"

namespace ftmpi::path {

const Driver& shm_driver() noexcept;  // shm/shm_driver.cpp
const Driver& udp_driver() noexcept;  // udp/udp_driver.cpp
const Driver& verbs_driver() noexcept;  // verbs/verbs_driver.cpp

// "a,b,,c" -> {"a", "b", "", "c"}: the drivers' lists (rails by ',', published rails by ';'), empty
// items kept so that a caller can refuse them (registry.cpp).
std::vector<std::string> split_list(std::string_view text, char separator);

}  // namespace ftmpi::path
