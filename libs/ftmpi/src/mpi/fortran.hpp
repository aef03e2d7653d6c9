// What the bindings of mpif.h and `use mpi` (fortran.cpp) share with the large-count calls of
// `use mpi_f08` (fortran_f08.cpp), which call the C functions directly since `use mpi` has no
// large-count calls to call: mpif.h's sentinels recognised by their addresses, statuses, strings.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "mpi/api.hpp"

namespace ftmpi::mpi::fortran {

// A choice buffer: MPI_IN_PLACE and MPI_BOTTOM are common blocks of mpif.h, known by their address.
void* buffer(void* p) noexcept;

// MPI_STATUS_IGNORE or MPI_STATUSES_IGNORE (common blocks too).
bool ignores_status(const MPI_Fint* f) noexcept;

// A status the C call fills and the Fortran array receives.
class StatusOut {
 public:
  // Starts from the program's status, so that the fields a call does not set (MPI_ERROR, which
  // single-completion calls leave alone) come back unchanged.
  explicit StatusOut(MPI_Fint* f) noexcept : f_(f) {
    if (!ignores_status(f_)) std::memcpy(&c_, f_, sizeof c_);
  }
  ~StatusOut() {
    if (!ignores_status(f_)) std::memcpy(f_, &c_, sizeof c_);
  }
  StatusOut(const StatusOut&) = delete;
  StatusOut& operator=(const StatusOut&) = delete;
  MPI_Status* get() noexcept { return ignores_status(f_) ? MPI_STATUS_IGNORE : &c_; }

 private:
  MPI_Fint* f_;
  MPI_Status c_{};
};

// A status the program gives.
MPI_Status status_in(const MPI_Fint* f) noexcept;

// A Fortran string (blank-padded, `length` long) as a C string.
std::string text(const char* s, std::size_t length);

}  // namespace ftmpi::mpi::fortran
