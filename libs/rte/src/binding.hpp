// CPU binding for --bind-to core, from hwloc's view of the machine (private to rte).
#pragma once

#include <sched.h>

#include <cstdint>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

// The CPUs of core (i mod cores) for i in 0..ranks-1, cores being those ftrun may run on.
base::Result<std::vector<cpu_set_t>> core_bindings(std::uint32_t ranks);

}  // namespace ftmpi::rte
