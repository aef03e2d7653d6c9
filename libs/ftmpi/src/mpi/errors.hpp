// MPI error classes: their names and messages, and the one table that maps what the engine reports
// (base::Errc, a truncated receive) to them.
#pragma once

#include <string_view>

#include "engine/engine.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::mpi {

// True for MPI_SUCCESS .. MPI_ERR_LASTCODE (every error code is its own class here).
bool is_error_class(int code) noexcept;
// "MPI_ERR_TAG"; requires is_error_class(code).
std::string_view error_class_name(int code) noexcept;
// "invalid tag"; requires is_error_class(code).
std::string_view error_class_text(int code) noexcept;

// The error class an engine failure is reported as.
int error_class_of(base::Errc code) noexcept;
// The error class a completed engine request is reported as (MPI_SUCCESS when it went well).
int error_class_of(const engine::Completion& completion) noexcept;

}  // namespace ftmpi::mpi
