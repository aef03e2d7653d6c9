// The procedures behind `use mpi_f08` (libs/ftmpi/fortran/mpi_f08.f90). The module declares each
// MPI_X of MPI-3.1's f08 binding as a generic whose specific, MPI_X_f08, is an external procedure
// with gfortran's calling convention (symbol mpi_x_f08_), defined here; so the module needs no code
// of its own and a program that uses it links libftmpi alone, as with `use mpi`.
//
// Each one calls the binding of `use mpi` (src/mpi/fortran.cpp) of the same name, which calls the C
// function. They are generated (fortran_f08_calls.inc, by cmake/mpif08.cmake) from the table that
// also gives the module their interfaces, fortran/mpi_f08_calls.txt: what they add is only what
// differs in f08:
// - ierror is OPTIONAL: gfortran passes a null pointer when it is absent;
// - a choice buffer is TYPE(*), DIMENSION(..): gfortran passes its array descriptor, whose first
//   member is the address. MPI_SUBARRAYS_SUPPORTED is .FALSE.: a section that is not contiguous is
//   refused with MPI_ERR_BUFFER (raised on the call's communicator, window or file), never sent from
//   the wrong bytes;
// - handles are TYPE(MPI_X) with one INTEGER, MPI_VAL, and TYPE(MPI_Status) has the six INTEGERs of
//   the INTEGER status, so both are passed to the old bindings as they are. MPI_STATUS_IGNORE,
//   MPI_IN_PLACE ... are the same common blocks, recognised there by their addresses;
// - LOGICALs are gfortran's default LOGICAL, an int that is 0 or 1, as the INTEGER flags of `use mpi`;
// - a large-count specific (MPI_X_f08c, MPI-4.0 section 19.2) calls C's MPI_X_c itself, since `use mpi`
//   has no large-count calls; it shares fortran.cpp's sentinels and statuses (fortran.hpp);
// - callbacks of f08 take their arguments as those of `use mpi` do (all by reference, TYPE(MPI_Comm)
//   as an INTEGER), so they are passed on as they are. A user reduction of f08 (TYPE(C_PTR), VALUE ::
//   invec, inoutvec; INTEGER :: len; TYPE(MPI_Datatype) :: datatype) has C's MPI_User_function
//   signature exactly, and MPI-4.0's MPI_User_function_c (len INTEGER(KIND=MPI_COUNT_KIND)) C's
//   MPI_User_function_c: no trampoline is needed there either.
#include <cstddef>
#include <initializer_list>

#include "mpi/api.hpp"
#include "mpi/fortran.hpp"

#define FTMPI_FORTRAN extern "C" __attribute__((visibility("default")))

using F = MPI_Fint;
using A = MPI_Aint;
namespace fortran = ftmpi::mpi::fortran;

namespace {

// gfortran's array descriptor (GCC 8 and later), as an assumed-rank dummy receives it.
struct Dim {
  std::ptrdiff_t stride;  // in elements
  std::ptrdiff_t lower;
  std::ptrdiff_t upper;
};
struct Desc {
  void* base_addr;
  std::size_t offset;
  std::size_t elem_len;
  int version;
  signed char rank;
  signed char type;
  short attribute;
  std::ptrdiff_t span;  // bytes between elements
  Dim dim[15];
};

bool contiguous(const Desc* d) noexcept {
  if (d->rank <= 0) return true;
  if (d->span != static_cast<std::ptrdiff_t>(d->elem_len)) return false;
  std::ptrdiff_t expected = 1;
  for (int i = 0; i < d->rank; ++i) {
    const std::ptrdiff_t extent = d->dim[i].upper - d->dim[i].lower + 1;
    if (extent <= 0) return true;  // empty, or the unknown last extent of an assumed-size array
    if (extent > 1 && d->dim[i].stride != expected) return false;
    expected *= extent;
  }
  return true;
}

void* at(const Desc* d) noexcept { return d->base_addr; }

// The old binding's error into the optional ierror.
void give(F* ierror, F e) noexcept {
  if (ierror != nullptr) *ierror = e;
}

// Buffers that are not contiguous: MPI_ERR_BUFFER through the error handler of the call's
// communicator, else of its window or file (`raise` is MPI_Comm_call_errhandler, MPI_Win_... or
// MPI_File_...; a call with none of them, as MPI_Mrecv, uses MPI_COMM_SELF's, as MPI_Wait does).
bool refused(F* ierror, int (*raise)(int, int), F handle, std::initializer_list<const Desc*> buffers) {
  for (const Desc* d : buffers) {
    if (!contiguous(d)) {
      raise(handle, MPI_ERR_BUFFER);
      give(ierror, MPI_ERR_BUFFER);
      return true;
    }
  }
  return false;
}

}  // namespace

// The Fortran callbacks as src/mpi/fortran.cpp's bindings take them; named after f08's abstract
// interfaces, which the table uses.
namespace callback {
using MPI_User_function = ::MPI_User_function;
using MPI_Comm_errhandler_function = ::MPI_Comm_errhandler_function;
using MPI_File_errhandler_function = ::MPI_File_errhandler_function;
using MPI_Win_errhandler_function = ::MPI_Win_errhandler_function;
using MPI_Comm_copy_attr_function = void(F* old, F* keyval, A* extra_state, A* in, A* out, F* flag, F* ierr);
using MPI_Comm_delete_attr_function = void(F* handle, F* keyval, A* value, A* extra_state, F* ierr);
using MPI_Type_copy_attr_function = MPI_Comm_copy_attr_function;
using MPI_Type_delete_attr_function = MPI_Comm_delete_attr_function;
using MPI_Win_copy_attr_function = MPI_Comm_copy_attr_function;
using MPI_Win_delete_attr_function = MPI_Comm_delete_attr_function;
using MPI_Copy_function = void(F* old, F* keyval, F* extra_state, F* in, F* out, F* flag, F* ierr);
using MPI_Delete_function = void(F* handle, F* keyval, F* value, F* extra_state, F* ierr);
using MPI_Grequest_query_function = void(A* extra_state, F* status, F* ierr);
using MPI_Grequest_free_function = void(A* extra_state, F* ierr);
using MPI_Grequest_cancel_function = void(A* extra_state, F* complete, F* ierr);
}  // namespace callback

#include "fortran_f08_calls.inc"

// f08's MPI_Buffer_detach gives the buffer's address back (TYPE(C_PTR)), which `use mpi`'s cannot.
FTMPI_FORTRAN void mpi_buffer_detach_f08_(void** buffer_addr, F* size, F* ierror) {
  void* address = nullptr;
  const int e = MPI_Buffer_detach(&address, size);
  if (e == MPI_SUCCESS) *buffer_addr = address;
  give(ierror, e);
}

// MPI-4.1's MPI_Comm_detach_buffer gives the address back too.
FTMPI_FORTRAN void mpi_comm_detach_buffer_f08_(const F* comm, void** buffer_addr, F* size, F* ierror) {
  void* address = nullptr;
  const int e = MPI_Comm_detach_buffer(*comm, &address, size);
  if (e == MPI_SUCCESS) *buffer_addr = address;
  give(ierror, e);
}

// MPI-4.0's MPI_Op_create_c, which `use mpi` has not: its own name in f08 (not a specific of
// MPI_Op_create), the reduction an MPI_User_function_c, which C calls as it calls its own.
FTMPI_FORTRAN void mpi_op_create_c_f08_(MPI_User_function_c* user_fn, const F* commute, F* op, F* ierror) {
  give(ierror, MPI_Op_create_c(user_fn, *commute != 0, op));
}

// MPI_Alloc_mem, MPI_Win_allocate, _allocate_shared and _shared_query give the memory as a TYPE(C_PTR)
// in f08 (MPI-3.1 sections 8.2 and 11.2.2), where `use mpi` gives its address in an
// INTEGER(KIND=MPI_ADDRESS_KIND).
namespace {
void give_base(F* ierror, int e, void* base, void** baseptr) noexcept {
  if (e == MPI_SUCCESS) *baseptr = base;
  give(ierror, e);
}
}  // namespace
FTMPI_FORTRAN void mpi_alloc_mem_f08_(const A* size, const F* info, void** baseptr, F* ierror) {
  void* base = nullptr;
  const int e = MPI_Alloc_mem(*size, *info, &base);
  give_base(ierror, e, base, baseptr);
}
FTMPI_FORTRAN void mpi_win_allocate_f08_(const A* size, const F* disp_unit, const F* info, const F* comm,
                                         void** baseptr, F* win, F* ierror) {
  void* base = nullptr;
  const int e = MPI_Win_allocate(*size, *disp_unit, *info, *comm, &base, win);
  give_base(ierror, e, base, baseptr);
}
FTMPI_FORTRAN void mpi_win_allocate_shared_f08_(const A* size, const F* disp_unit, const F* info, const F* comm,
                                                void** baseptr, F* win, F* ierror) {
  void* base = nullptr;
  const int e = MPI_Win_allocate_shared(*size, *disp_unit, *info, *comm, &base, win);
  give_base(ierror, e, base, baseptr);
}
FTMPI_FORTRAN void mpi_win_shared_query_f08_(const F* win, const F* rank, A* size, F* disp_unit, void** baseptr,
                                             F* ierror) {
  void* base = nullptr;
  const int e = MPI_Win_shared_query(*win, *rank, size, disp_unit, &base);
  give_base(ierror, e, base, baseptr);
}

// ---- handle comparison (operator(==) and operator(/=) of every handle type) -------------------------

// A generic's specifics need names of their own: one pair per type, all comparing the one INTEGER.
#define COMPARE(type)                                                                    \
  FTMPI_FORTRAN F mpi_##type##_eq_f08_(const F* a, const F* b) { return *a == *b ? 1 : 0; } \
  FTMPI_FORTRAN F mpi_##type##_ne_f08_(const F* a, const F* b) { return *a != *b ? 1 : 0; }
COMPARE(comm)
COMPARE(datatype)
COMPARE(group)
COMPARE(op)
COMPARE(request)
COMPARE(info)
COMPARE(errhandler)
COMPARE(message)
COMPARE(win)
COMPARE(file)
