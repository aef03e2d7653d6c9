// The hosts and slots of the Slurm allocation ftrun runs in (SLURM_JOB_ID set, no --host/--hostfile):
// from the values of SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE.
//
//   SLURM_JOB_NODELIST     Slurm's host list: comma-separated names, each with any number of bracket
//                          groups of numbers and ranges, expanded in order, the last group fastest:
//                          "node[01-03,7],gpu5"  -> node01 node02 node03 node7 gpu5
//                          "r[1-2]n[1-2]"        -> r1n1 r1n2 r2n1 r2n2
//                          A range whose first number has leading zeros keeps that width ("[008-010]").
//   SLURM_TASKS_PER_NODE   the tasks of each node, in the node list's order, "N(xK)" for K nodes of N:
//                          "2(x3),1" -> 2 2 2 1
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/hosts.hpp"

namespace ftmpi::rte {

// The most nodes an allocation's node list may expand to (a bound on what a malformed or hostile range
// such as "n[0-999999999]" can make ftrun allocate).
inline constexpr std::size_t kMaxAllocationNodes = 65536;

// Expands a Slurm host list. invalid_argument, naming the fault, for an empty list or name, an
// unbalanced or nested bracket, an empty group, a range that is not two numbers in order, a name that
// check_host_name refuses, or more than kMaxAllocationNodes names.
base::Result<std::vector<std::string>> expand_slurm_hostlist(std::string_view list);

// Expands SLURM_TASKS_PER_NODE into one count per node (each 1 to kMaxJobSize). invalid_argument for an
// empty item, a count or repetition that is not a positive number, or more than kMaxAllocationNodes.
base::Result<std::vector<std::uint64_t>> expand_slurm_tasks_per_node(std::string_view text);

// The allocation's hosts with their slots, in the node list's order. invalid_argument when either value
// is malformed (the message names the variable) or they count different numbers of nodes.
base::Result<std::vector<HostSlots>> slurm_allocation_hosts(std::string_view job_nodelist,
                                                            std::string_view tasks_per_node);

// SLURM_NTASKS, when set: the allocation's task count (1 to kMaxJobSize), else invalid_argument naming
// the variable. nullopt when `ntasks` is null (not set).
base::Result<std::optional<std::uint32_t>> slurm_allocation_tasks(const char* ntasks);

}  // namespace ftmpi::rte
