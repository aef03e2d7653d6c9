// The registered drivers (registry.cpp lists them), each defined in its own folder.
#pragma once

#include "ftmpi/path/registry.hpp"

namespace ftmpi::path {

const Driver& shm_driver() noexcept;  // shm/shm_driver.cpp
const Driver& udp_driver() noexcept;  // udp/udp_driver.cpp
const Driver& verbs_driver() noexcept;  // verbs/verbs_driver.cpp

}  // namespace ftmpi::path
