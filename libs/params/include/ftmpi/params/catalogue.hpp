// The parameter catalogue: every runtime parameter of libftmpi, each library's table in one list, for
// MPI_Init, ftrun (--param, --help-params) and ftpath params. A small library of its own so that tools
// link the rows, not the engine.
#pragma once

#include <span>

#include "ftmpi/base/params.hpp"

namespace ftmpi::params {

// base, match, path, rte, coll and the engine, in that order.
std::span<const std::span<const base::ParamRow>> all_param_tables() noexcept;

}  // namespace ftmpi::params
