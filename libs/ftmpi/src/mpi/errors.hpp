// MPI error classes: their names and messages, and the one table that maps what the engine reports
// (base::Errc, a truncated receive) to them.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>

#include "engine/engine.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::mpi {

// True for MPI_SUCCESS .. MPI_ERR_LASTCODE (every error code is its own class here).
bool is_error_class(int code) noexcept;
// "MPI_ERR_TAG"; for a code the program added (MPI_Add_error_code) or a number that is no code, what
// it is ("MPI_ERR_UNKNOWN").
std::string_view error_class_name(int code) noexcept;
// "invalid tag"; an added code's string (MPI_Add_error_string); for a number that is no code, so.
std::string_view error_class_text(int code) noexcept;
// The class of any code: a predefined code is its own, an added code has the one it was added to, and
// a number that is no code is MPI_ERR_UNKNOWN.
int class_of_code(int code) noexcept;
// "77: the program's own failure": a code the program handed back (a generalized request's callback),
// with what it says, for a failure's reason.
std::string code_and_text(int code);

// Error classes and codes the program adds (MPI_Add_error_class, MPI_Add_error_code), numbered from
// MPI_ERR_LASTCODE + 1 in the order added.
bool is_user_code(int code) noexcept;
int add_error_code(int error_class);  // a new code of `error_class`; of itself when error_class < 0 (a class)
int user_code_class(int code) noexcept;           // requires is_user_code(code)
std::string& user_code_string(int code) noexcept;  // requires is_user_code(code); empty until set
int last_used_code() noexcept;                     // MPI_LASTUSEDCODE

// Error handlers the program creates (MPI_Comm_create_errhandler): handles after the predefined two.
MPI_Errhandler add_errhandler(MPI_Comm_errhandler_function* function);
// Predefined, or created and not freed: one a communicator may be given.
bool errhandler_live(MPI_Errhandler handle) noexcept;
// MPI_Comm_get_errhandler gives the program one more handle of a created handler, to free in turn.
void hand_out_errhandler(MPI_Errhandler handle) noexcept;
// Calls `handler` with `comm` and `code` when it is a created one, freed or not (a communicator keeps
// using a handler freed after it was set); false, calling nothing, for the predefined ones.
bool call_created_errhandler(MPI_Errhandler handler, MPI_Comm comm, int code);
// Marks a created handler freed; false for a predefined one or an unknown handle.
bool free_errhandler(MPI_Errhandler handle) noexcept;

// The error class an engine failure is reported as.
int error_class_of(base::Errc code) noexcept;
// The error class a completed engine request is reported as (MPI_SUCCESS when it went well). Inline:
// every blocking receive asks.
inline int error_class_of(const engine::Completion& completion) noexcept {
  if (completion.lost_peer >= 0) [[unlikely]] return MPIX_ERR_PROC_FAILED;
  return completion.truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

}  // namespace ftmpi::mpi
