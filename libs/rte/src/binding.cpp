#include "binding.hpp"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <memory>

namespace ftmpi::rte {

base::Result<std::vector<cpu_set_t>> core_bindings(std::uint32_t ranks) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return base::Status(base::Errc::internal, "hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> topology(raw, hwloc_topology_destroy);
  // hwloc reports only the CPUs this process may use (its cpuset, a container's limits) by default.
  if (hwloc_topology_load(topology.get()) != 0) {
    return base::Status(base::Errc::internal, "hwloc cannot read this machine's topology");
  }
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int cores = hwloc_get_nbobjs_by_type(topology.get(), type);
  if (cores <= 0) {
    // Some virtual machines expose processing units without cores.
    type = HWLOC_OBJ_PU;
    cores = hwloc_get_nbobjs_by_type(topology.get(), type);
  }
  if (cores <= 0) return base::Status(base::Errc::unsupported, "hwloc finds no cores to bind to");
  std::vector<cpu_set_t> sets(ranks);
  for (std::uint32_t i = 0; i < ranks; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology.get(), type, i % static_cast<unsigned>(cores));
    CPU_ZERO(&sets[i]);
    if (core == nullptr || hwloc_cpuset_to_glibc_sched_affinity(topology.get(), core->cpuset, &sets[i],
                                                                sizeof(cpu_set_t)) != 0) {
      return base::Status(base::Errc::internal,
                          "hwloc cannot convert the CPU set of core " + std::to_string(i));
    }
  }
  return sets;
}

}  // namespace ftmpi::rte
