// The runtime environment's parameters (one row each, owned here: docs/architecture.md, "Parameters").
#pragma once

#include <span>

#include "ftmpi/base/params.hpp"

namespace ftmpi::rte {

inline constexpr base::ParamRow kConnectTimeout{
    "rte.connect_timeout",
    base::ParamType::duration,
    "30s",
    "how long a rank may take to connect and authenticate to ftrun",
    base::ParamLevel::basic,
    base::ParamScope::rank};
inline constexpr base::ParamRow kKillGrace{
    "rte.kill_grace",
    base::ParamType::duration,
    "1s",
    "time ftrun gives ranks between SIGTERM and SIGKILL when it terminates a job",
    base::ParamLevel::basic,
    base::ParamScope::job};
inline constexpr base::ParamRow kDisconnectGrace{
    "rte.disconnect_grace",
    base::ParamType::duration,
    "1s",
    "how long a rank may keep running after closing its connection to ftrun without finalize",
    base::ParamLevel::advanced,
    base::ParamScope::job};
inline constexpr base::ParamRow kOutputLinger{
    "rte.output_linger",
    base::ParamType::duration,
    "1s",
    "how long ftrun forwards output of processes the ranks left behind after the last rank exits",
    base::ParamLevel::advanced,
    base::ParamScope::job};
// With ranks on other hosts and this left unset, ftrun listens on 0.0.0.0 (launcher.cpp).
inline constexpr base::ParamRow kListenAddress{
    "rte.listen_address",
    base::ParamType::string,
    "127.0.0.1",
    "numeric IPv4 or IPv6 address ftrun listens on for its ranks (0.0.0.0: every address); unset and with "
    "ranks on other hosts: the address the route to each of those hosts leaves from, and 127.0.0.1 (every "
    "address when a host name does not resolve on ftrun's host)",
    base::ParamLevel::advanced,
    base::ParamScope::job};

// This library's parameter table.
std::span<const base::ParamRow> rte_params() noexcept;

}  // namespace ftmpi::rte
