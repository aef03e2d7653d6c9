#include "placement.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <hwloc.h>

#include "ftmpi/base/log.hpp"

namespace ftmpi::path::shm {
namespace {

void bind_to_local_nodes(std::byte* row, std::size_t size) noexcept {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return;
  // Only NUMA nodes and PUs matter here, and hwloc always keeps those; skipping caches and I/O devices
  // makes loading several times faster.
  hwloc_topology_set_all_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(topology) == 0 && hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) > 1) {
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    // The nodes near the CPUs this process may run on; unbound, that is every node, and then MPOL_BIND
    // still prefers the node of the CPU that allocates, which is ours (we populate right after).
    const bool bound = cpus != nullptr && hwloc_get_cpubind(topology, cpus, HWLOC_CPUBIND_PROCESS) == 0 &&
                       hwloc_set_area_membind(topology, row, size, cpus, HWLOC_MEMBIND_BIND,
                                              HWLOC_MEMBIND_MIGRATE) == 0;
    base::logger().debug("shm: outgoing FIFOs {} to this process's NUMA nodes",
                         bound ? "bound" : "not bound (first touch)");
    hwloc_bitmap_free(cpus);
  }
  hwloc_topology_destroy(topology);
}

}  // namespace

base::Status place_near_sender(std::byte* row, std::size_t size) noexcept {
  bind_to_local_nodes(row, size);
  // EINVAL: a kernel before 5.14 without MADV_POPULATE_WRITE; the pages then fault in on first use.
  if (madvise(row, size, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    const int err = errno;
    // EFAULT: a page could not be allocated (the tmpfs behind /dev/shm is full, or a memory limit).
    return {base::Errc::resource_exhausted,
            "cannot allocate " + std::to_string(size) + " bytes of shared memory for this rank's FIFOs: " +
                (err == EFAULT ? std::string("no page left") : std::string(std::strerror(err))) +
                " (is /dev/shm full? lower path.shm.slots or path.shm.slot_size)"};
  }
  return {};
}

}  // namespace ftmpi::path::shm
