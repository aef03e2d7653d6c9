// The procedures behind `use mpi_f08` (libs/ftmpi/fortran/mpi_f08.f90). The module declares each
// MPI_X of MPI-3.1's f08 binding as a generic whose specific, MPI_X_f08, is an external procedure
// with gfortran's calling convention (symbol mpi_x_f08_), defined here; so the module needs no code
// of its own and a program that uses it links libftmpi alone, as with `use mpi`.
//
// Each one calls the binding of `use mpi` (src/mpi/fortran.cpp) of the same name, which calls the C
// function; what is added here is only what differs in f08:
// - ierror is OPTIONAL: gfortran passes a null pointer when it is absent;
// - a choice buffer is TYPE(*), DIMENSION(..): gfortran passes its array descriptor, whose first
//   member is the address. MPI_SUBARRAYS_SUPPORTED is .FALSE.: a section that is not contiguous is
//   refused with MPI_ERR_BUFFER (raised on the call's communicator), never sent from the wrong bytes;
// - handles are TYPE(MPI_X) with one INTEGER, MPI_VAL, and TYPE(MPI_Status) has the six INTEGERs of
//   the INTEGER status, so both are passed to the old bindings as they are. MPI_STATUS_IGNORE,
//   MPI_IN_PLACE ... are the same common blocks, recognised there by their addresses.
// A user reduction of f08 (TYPE(C_PTR), VALUE :: invec, inoutvec; INTEGER :: len;
// TYPE(MPI_Datatype) :: datatype) has C's MPI_User_function signature exactly, so MPI_Op_create
// takes it as it is: no trampoline is needed.
#include <cstddef>

#include "mpi/api.hpp"

#define FTMPI_FORTRAN extern "C" __attribute__((visibility("default")))

using F = MPI_Fint;
using A = MPI_Aint;

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

// Buffers that are not contiguous: MPI_ERR_BUFFER through the communicator's error handler.
bool refused(F* ierror, F comm, const Desc* a, const Desc* b = nullptr) {
  if (contiguous(a) && (b == nullptr || contiguous(b))) return false;
  MPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
  give(ierror, MPI_ERR_BUFFER);
  return true;
}

}  // namespace

// The bindings of src/mpi/fortran.cpp that these call.
extern "C" {
void mpi_init_(F*);
void mpi_init_thread_(F*, F*, F*);
void mpi_finalize_(F*);
void mpi_initialized_(F*, F*);
void mpi_finalized_(F*, F*);
void mpi_abort_(F*, F*, F*);
void mpi_get_processor_name_(char*, F*, F*, std::size_t);
void mpi_get_library_version_(char*, F*, F*, std::size_t);
void mpi_error_string_(F*, char*, F*, F*, std::size_t);
void mpi_error_class_(F*, F*, F*);
void mpi_comm_set_errhandler_(F*, F*, F*);
void mpi_comm_get_errhandler_(F*, F*, F*);
void mpi_errhandler_free_(F*, F*);
void mpi_send_(void*, F*, F*, F*, F*, F*, F*);
void mpi_ssend_(void*, F*, F*, F*, F*, F*, F*);
void mpi_rsend_(void*, F*, F*, F*, F*, F*, F*);
void mpi_bsend_(void*, F*, F*, F*, F*, F*, F*);
void mpi_recv_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_isend_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_issend_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_irsend_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_ibsend_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_irecv_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_send_init_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_recv_init_(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_sendrecv_(void*, F*, F*, F*, F*, void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_sendrecv_replace_(void*, F*, F*, F*, F*, F*, F*, F*, F*, F*);
void mpi_probe_(F*, F*, F*, F*, F*);
void mpi_iprobe_(F*, F*, F*, F*, F*, F*);
void mpi_mprobe_(F*, F*, F*, F*, F*, F*);
void mpi_improbe_(F*, F*, F*, F*, F*, F*, F*);
void mpi_mrecv_(void*, F*, F*, F*, F*, F*);
void mpi_imrecv_(void*, F*, F*, F*, F*, F*);
void mpi_get_count_(F*, F*, F*, F*);
void mpi_get_elements_(F*, F*, F*, F*);
void mpi_wait_(F*, F*, F*);
void mpi_test_(F*, F*, F*, F*);
void mpi_waitall_(F*, F*, F*, F*);
void mpi_testall_(F*, F*, F*, F*, F*);
void mpi_waitany_(F*, F*, F*, F*, F*);
void mpi_testany_(F*, F*, F*, F*, F*, F*);
void mpi_waitsome_(F*, F*, F*, F*, F*, F*);
void mpi_testsome_(F*, F*, F*, F*, F*, F*);
void mpi_start_(F*, F*);
void mpi_startall_(F*, F*, F*);
void mpi_request_free_(F*, F*);
void mpi_cancel_(F*, F*);
void mpi_test_cancelled_(F*, F*, F*);
void mpi_barrier_(F*, F*);
void mpi_ibarrier_(F*, F*, F*);
void mpi_bcast_(void*, F*, F*, F*, F*, F*);
void mpi_ibcast_(void*, F*, F*, F*, F*, F*, F*);
void mpi_reduce_(void*, void*, F*, F*, F*, F*, F*, F*);
void mpi_ireduce_(void*, void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_allreduce_(void*, void*, F*, F*, F*, F*, F*);
void mpi_iallreduce_(void*, void*, F*, F*, F*, F*, F*, F*);
void mpi_scan_(void*, void*, F*, F*, F*, F*, F*);
void mpi_exscan_(void*, void*, F*, F*, F*, F*, F*);
void mpi_reduce_scatter_block_(void*, void*, F*, F*, F*, F*, F*);
void mpi_gather_(void*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_gatherv_(void*, F*, F*, void*, F*, F*, F*, F*, F*, F*);
void mpi_scatter_(void*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_scatterv_(void*, F*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_allgather_(void*, F*, F*, void*, F*, F*, F*, F*);
void mpi_allgatherv_(void*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_alltoall_(void*, F*, F*, void*, F*, F*, F*, F*);
void mpi_alltoallv_(void*, F*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_op_create_(MPI_User_function*, F*, F*, F*);
void mpi_op_free_(F*, F*);
void mpi_comm_rank_(F*, F*, F*);
void mpi_comm_size_(F*, F*, F*);
void mpi_comm_dup_(F*, F*, F*);
void mpi_comm_split_(F*, F*, F*, F*, F*);
void mpi_comm_free_(F*, F*);
void mpi_comm_compare_(F*, F*, F*, F*);
void mpi_comm_group_(F*, F*, F*);
void mpi_comm_set_name_(F*, const char*, F*, std::size_t);
void mpi_comm_get_name_(F*, char*, F*, F*, std::size_t);
void mpi_group_size_(F*, F*, F*);
void mpi_group_rank_(F*, F*, F*);
void mpi_group_free_(F*, F*);
void mpi_group_incl_(F*, F*, F*, F*, F*);
void mpi_group_translate_ranks_(F*, F*, F*, F*, F*, F*);
void mpi_group_compare_(F*, F*, F*, F*);
void mpi_type_contiguous_(F*, F*, F*, F*);
void mpi_type_vector_(F*, F*, F*, F*, F*, F*);
void mpi_type_create_struct_(F*, F*, A*, F*, F*, F*);
void mpi_type_create_resized_(F*, A*, A*, F*, F*);
void mpi_type_commit_(F*, F*);
void mpi_type_free_(F*, F*);
void mpi_type_size_(F*, F*, F*);
void mpi_type_get_extent_(F*, A*, A*, F*);
void mpi_get_address_(void*, A*, F*);
}

// One wrapper: `call` runs the old binding with the error code in `e`, which goes to the optional ierror.
#define F08(name, params, call)          \
  FTMPI_FORTRAN void mpi_##name##_f08_ params { \
    F e = MPI_SUCCESS;                   \
    call;                                \
    give(ierror, e);                     \
  }

// ---- environment and errors -------------------------------------------------------------------------

F08(init, (F * ierror), mpi_init_(&e))
F08(init_thread, (F * required, F* provided, F* ierror), mpi_init_thread_(required, provided, &e))
F08(finalize, (F * ierror), mpi_finalize_(&e))
F08(initialized, (F * flag, F* ierror), mpi_initialized_(flag, &e))
F08(finalized, (F * flag, F* ierror), mpi_finalized_(flag, &e))
F08(abort, (F * comm, F* code, F* ierror), mpi_abort_(comm, code, &e))
F08(get_processor_name, (char* name, F* resultlen, F* ierror, std::size_t n),
    mpi_get_processor_name_(name, resultlen, &e, n))
F08(get_library_version, (char* version, F* resultlen, F* ierror, std::size_t n),
    mpi_get_library_version_(version, resultlen, &e, n))
F08(error_string, (F * code, char* text, F* resultlen, F* ierror, std::size_t n),
    mpi_error_string_(code, text, resultlen, &e, n))
F08(error_class, (F * code, F* error_class, F* ierror), mpi_error_class_(code, error_class, &e))
F08(comm_set_errhandler, (F * comm, F* handler, F* ierror), mpi_comm_set_errhandler_(comm, handler, &e))
F08(comm_get_errhandler, (F * comm, F* handler, F* ierror), mpi_comm_get_errhandler_(comm, handler, &e))
F08(errhandler_free, (F * handler, F* ierror), mpi_errhandler_free_(handler, &e))

// ---- point-to-point ---------------------------------------------------------------------------------

#define SEND(name)                                                                                     \
  FTMPI_FORTRAN void mpi_##name##_f08_(const Desc* buf, F* count, F* type, F* peer, F* tag, F* comm, \
                                       F* ierror) {                                                  \
    if (refused(ierror, *comm, buf)) return;                                                         \
    F e = MPI_SUCCESS;                                                                               \
    mpi_##name##_(at(buf), count, type, peer, tag, comm, &e);                                        \
    give(ierror, e);                                                                                 \
  }
#define ISEND(name)                                                                                     \
  FTMPI_FORTRAN void mpi_##name##_f08_(const Desc* buf, F* count, F* type, F* peer, F* tag, F* comm,  \
                                       F* request, F* ierror) {                                       \
    if (refused(ierror, *comm, buf)) return;                                                          \
    F e = MPI_SUCCESS;                                                                                \
    mpi_##name##_(at(buf), count, type, peer, tag, comm, request, &e);                                \
    give(ierror, e);                                                                                  \
  }
SEND(send)
SEND(ssend)
SEND(rsend)
SEND(bsend)
ISEND(isend)
ISEND(issend)
ISEND(irsend)
ISEND(ibsend)
ISEND(irecv)
ISEND(send_init)
ISEND(recv_init)

FTMPI_FORTRAN void mpi_recv_f08_(const Desc* buf, F* count, F* type, F* source, F* tag, F* comm, F* status,
                                 F* ierror) {
  if (refused(ierror, *comm, buf)) return;
  F e = MPI_SUCCESS;
  mpi_recv_(at(buf), count, type, source, tag, comm, status, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_sendrecv_f08_(const Desc* sendbuf, F* sendcount, F* sendtype, F* dest, F* sendtag,
                                     const Desc* recvbuf, F* recvcount, F* recvtype, F* source, F* recvtag,
                                     F* comm, F* status, F* ierror) {
  if (refused(ierror, *comm, sendbuf, recvbuf)) return;
  F e = MPI_SUCCESS;
  mpi_sendrecv_(at(sendbuf), sendcount, sendtype, dest, sendtag, at(recvbuf), recvcount, recvtype, source, recvtag,
                comm, status, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_sendrecv_replace_f08_(const Desc* buf, F* count, F* type, F* dest, F* sendtag, F* source,
                                             F* recvtag, F* comm, F* status, F* ierror) {
  if (refused(ierror, *comm, buf)) return;
  F e = MPI_SUCCESS;
  mpi_sendrecv_replace_(at(buf), count, type, dest, sendtag, source, recvtag, comm, status, &e);
  give(ierror, e);
}
F08(probe, (F * source, F* tag, F* comm, F* status, F* ierror), mpi_probe_(source, tag, comm, status, &e))
F08(iprobe, (F * source, F* tag, F* comm, F* flag, F* status, F* ierror),
    mpi_iprobe_(source, tag, comm, flag, status, &e))
F08(mprobe, (F * source, F* tag, F* comm, F* message, F* status, F* ierror),
    mpi_mprobe_(source, tag, comm, message, status, &e))
F08(improbe, (F * source, F* tag, F* comm, F* flag, F* message, F* status, F* ierror),
    mpi_improbe_(source, tag, comm, flag, message, status, &e))
// A message has no communicator to raise an error on: MPI_COMM_SELF's handler, as for MPI_Wait.
FTMPI_FORTRAN void mpi_mrecv_f08_(const Desc* buf, F* count, F* type, F* message, F* status, F* ierror) {
  if (refused(ierror, MPI_COMM_SELF, buf)) return;
  F e = MPI_SUCCESS;
  mpi_mrecv_(at(buf), count, type, message, status, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_imrecv_f08_(const Desc* buf, F* count, F* type, F* message, F* request, F* ierror) {
  if (refused(ierror, MPI_COMM_SELF, buf)) return;
  F e = MPI_SUCCESS;
  mpi_imrecv_(at(buf), count, type, message, request, &e);
  give(ierror, e);
}
F08(get_count, (F * status, F* type, F* count, F* ierror), mpi_get_count_(status, type, count, &e))
F08(get_elements, (F * status, F* type, F* count, F* ierror), mpi_get_elements_(status, type, count, &e))

// ---- completion -------------------------------------------------------------------------------------

F08(wait, (F * request, F* status, F* ierror), mpi_wait_(request, status, &e))
F08(test, (F * request, F* flag, F* status, F* ierror), mpi_test_(request, flag, status, &e))
F08(waitall, (F * count, F* requests, F* statuses, F* ierror), mpi_waitall_(count, requests, statuses, &e))
F08(testall, (F * count, F* requests, F* flag, F* statuses, F* ierror),
    mpi_testall_(count, requests, flag, statuses, &e))
F08(waitany, (F * count, F* requests, F* index, F* status, F* ierror),
    mpi_waitany_(count, requests, index, status, &e))
F08(testany, (F * count, F* requests, F* index, F* flag, F* status, F* ierror),
    mpi_testany_(count, requests, index, flag, status, &e))
F08(waitsome, (F * count, F* requests, F* outcount, F* indices, F* statuses, F* ierror),
    mpi_waitsome_(count, requests, outcount, indices, statuses, &e))
F08(testsome, (F * count, F* requests, F* outcount, F* indices, F* statuses, F* ierror),
    mpi_testsome_(count, requests, outcount, indices, statuses, &e))
F08(start, (F * request, F* ierror), mpi_start_(request, &e))
F08(startall, (F * count, F* requests, F* ierror), mpi_startall_(count, requests, &e))
F08(request_free, (F * request, F* ierror), mpi_request_free_(request, &e))
F08(cancel, (F * request, F* ierror), mpi_cancel_(request, &e))
F08(test_cancelled, (F * status, F* flag, F* ierror), mpi_test_cancelled_(status, flag, &e))

// ---- collectives ------------------------------------------------------------------------------------

F08(barrier, (F * comm, F* ierror), mpi_barrier_(comm, &e))
F08(ibarrier, (F * comm, F* request, F* ierror), mpi_ibarrier_(comm, request, &e))
FTMPI_FORTRAN void mpi_bcast_f08_(const Desc* buf, F* count, F* type, F* root, F* comm, F* ierror) {
  if (refused(ierror, *comm, buf)) return;
  F e = MPI_SUCCESS;
  mpi_bcast_(at(buf), count, type, root, comm, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_ibcast_f08_(const Desc* buf, F* count, F* type, F* root, F* comm, F* request, F* ierror) {
  if (refused(ierror, *comm, buf)) return;
  F e = MPI_SUCCESS;
  mpi_ibcast_(at(buf), count, type, root, comm, request, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_reduce_f08_(const Desc* send, const Desc* recv, F* count, F* type, F* op, F* root, F* comm,
                                   F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_reduce_(at(send), at(recv), count, type, op, root, comm, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_ireduce_f08_(const Desc* send, const Desc* recv, F* count, F* type, F* op, F* root, F* comm,
                                    F* request, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_ireduce_(at(send), at(recv), count, type, op, root, comm, request, &e);
  give(ierror, e);
}
// allreduce, scan, exscan, reduce_scatter_block: (send, recv, count, type, op, comm).
#define REDUCE(name)                                                                                            \
  FTMPI_FORTRAN void mpi_##name##_f08_(const Desc* send, const Desc* recv, F* count, F* type, F* op, F* comm, \
                                       F* ierror) {                                                           \
    if (refused(ierror, *comm, send, recv)) return;                                                           \
    F e = MPI_SUCCESS;                                                                                        \
    mpi_##name##_(at(send), at(recv), count, type, op, comm, &e);                                             \
    give(ierror, e);                                                                                          \
  }
REDUCE(allreduce)
REDUCE(scan)
REDUCE(exscan)
REDUCE(reduce_scatter_block)
FTMPI_FORTRAN void mpi_iallreduce_f08_(const Desc* send, const Desc* recv, F* count, F* type, F* op, F* comm,
                                       F* request, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_iallreduce_(at(send), at(recv), count, type, op, comm, request, &e);
  give(ierror, e);
}
// gather, scatter: (send, scount, stype, recv, rcount, rtype, root, comm).
#define ROOTED(name)                                                                                         \
  FTMPI_FORTRAN void mpi_##name##_f08_(const Desc* send, F* scount, F* stype, const Desc* recv, F* rcount, \
                                       F* rtype, F* root, F* comm, F* ierror) {                            \
    if (refused(ierror, *comm, send, recv)) return;                                                        \
    F e = MPI_SUCCESS;                                                                                     \
    mpi_##name##_(at(send), scount, stype, at(recv), rcount, rtype, root, comm, &e);                       \
    give(ierror, e);                                                                                       \
  }
ROOTED(gather)
ROOTED(scatter)
// allgather, alltoall: (send, scount, stype, recv, rcount, rtype, comm).
#define ALL(name)                                                                                            \
  FTMPI_FORTRAN void mpi_##name##_f08_(const Desc* send, F* scount, F* stype, const Desc* recv, F* rcount, \
                                       F* rtype, F* comm, F* ierror) {                                     \
    if (refused(ierror, *comm, send, recv)) return;                                                        \
    F e = MPI_SUCCESS;                                                                                     \
    mpi_##name##_(at(send), scount, stype, at(recv), rcount, rtype, comm, &e);                             \
    give(ierror, e);                                                                                       \
  }
ALL(allgather)
ALL(alltoall)
FTMPI_FORTRAN void mpi_gatherv_f08_(const Desc* send, F* scount, F* stype, const Desc* recv, F* rcounts, F* displs,
                                    F* rtype, F* root, F* comm, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_gatherv_(at(send), scount, stype, at(recv), rcounts, displs, rtype, root, comm, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_scatterv_f08_(const Desc* send, F* scounts, F* displs, F* stype, const Desc* recv, F* rcount,
                                     F* rtype, F* root, F* comm, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_scatterv_(at(send), scounts, displs, stype, at(recv), rcount, rtype, root, comm, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_allgatherv_f08_(const Desc* send, F* scount, F* stype, const Desc* recv, F* rcounts,
                                       F* displs, F* rtype, F* comm, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_allgatherv_(at(send), scount, stype, at(recv), rcounts, displs, rtype, comm, &e);
  give(ierror, e);
}
FTMPI_FORTRAN void mpi_alltoallv_f08_(const Desc* send, F* scounts, F* sdispls, F* stype, const Desc* recv,
                                      F* rcounts, F* rdispls, F* rtype, F* comm, F* ierror) {
  if (refused(ierror, *comm, send, recv)) return;
  F e = MPI_SUCCESS;
  mpi_alltoallv_(at(send), scounts, sdispls, stype, at(recv), rcounts, rdispls, rtype, comm, &e);
  give(ierror, e);
}
F08(op_create, (MPI_User_function * function, F* commute, F* op, F* ierror),
    mpi_op_create_(function, commute, op, &e))
F08(op_free, (F * op, F* ierror), mpi_op_free_(op, &e))

// ---- communicators and groups -----------------------------------------------------------------------

F08(comm_rank, (F * comm, F* rank, F* ierror), mpi_comm_rank_(comm, rank, &e))
F08(comm_size, (F * comm, F* size, F* ierror), mpi_comm_size_(comm, size, &e))
F08(comm_dup, (F * comm, F* newcomm, F* ierror), mpi_comm_dup_(comm, newcomm, &e))
F08(comm_split, (F * comm, F* color, F* key, F* newcomm, F* ierror), mpi_comm_split_(comm, color, key, newcomm, &e))
F08(comm_free, (F * comm, F* ierror), mpi_comm_free_(comm, &e))
F08(comm_compare, (F * a, F* b, F* result, F* ierror), mpi_comm_compare_(a, b, result, &e))
F08(comm_group, (F * comm, F* group, F* ierror), mpi_comm_group_(comm, group, &e))
F08(comm_set_name, (F * comm, const char* name, F* ierror, std::size_t n), mpi_comm_set_name_(comm, name, &e, n))
F08(comm_get_name, (F * comm, char* name, F* resultlen, F* ierror, std::size_t n),
    mpi_comm_get_name_(comm, name, resultlen, &e, n))
F08(group_size, (F * group, F* size, F* ierror), mpi_group_size_(group, size, &e))
F08(group_rank, (F * group, F* rank, F* ierror), mpi_group_rank_(group, rank, &e))
F08(group_free, (F * group, F* ierror), mpi_group_free_(group, &e))
F08(group_incl, (F * group, F* n, F* ranks, F* newgroup, F* ierror), mpi_group_incl_(group, n, ranks, newgroup, &e))
F08(group_translate_ranks, (F * a, F* n, F* ranks_a, F* b, F* ranks_b, F* ierror),
    mpi_group_translate_ranks_(a, n, ranks_a, b, ranks_b, &e))
F08(group_compare, (F * a, F* b, F* result, F* ierror), mpi_group_compare_(a, b, result, &e))

// ---- datatypes --------------------------------------------------------------------------------------

F08(type_contiguous, (F * count, F* old, F* newtype, F* ierror), mpi_type_contiguous_(count, old, newtype, &e))
F08(type_vector, (F * count, F* blocklength, F* stride, F* old, F* newtype, F* ierror),
    mpi_type_vector_(count, blocklength, stride, old, newtype, &e))
F08(type_create_struct, (F * count, F* blocklengths, A* displs, F* types, F* newtype, F* ierror),
    mpi_type_create_struct_(count, blocklengths, displs, types, newtype, &e))
F08(type_create_resized, (F * old, A* lb, A* extent, F* newtype, F* ierror),
    mpi_type_create_resized_(old, lb, extent, newtype, &e))
F08(type_commit, (F * type, F* ierror), mpi_type_commit_(type, &e))
F08(type_free, (F * type, F* ierror), mpi_type_free_(type, &e))
F08(type_size, (F * type, F* size, F* ierror), mpi_type_size_(type, size, &e))
F08(type_get_extent, (F * type, A* lb, A* extent, F* ierror), mpi_type_get_extent_(type, lb, extent, &e))
F08(get_address, (const Desc* location, A* address, F* ierror), mpi_get_address_(at(location), address, &e))

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
