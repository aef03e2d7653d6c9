// The Fortran bindings (mpif.h and `use mpi`, gfortran's calling convention): every argument by
// reference, the error code in a last `ierror` argument, lowercase names with one trailing underscore,
// the hidden lengths of character arguments (size_t) after all others. Handles are the C handles
// (ints) except requests, which are pointers in C: a table gives each one an INTEGER while it lives
// (MPI_Request_c2f / MPI_Request_f2c). The sentinels are common blocks mpif.h declares; their addresses
// mean MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, MPI_UNWEIGHTED and
// MPI_WEIGHTS_EMPTY here. Fortran's callbacks (attribute copy and delete functions, generalized requests)
// take every argument by reference: C calls trampolines that call them.
//
// Each wrapper calls the C function of the same name, so a C tool intercepting MPI_X sees Fortran's
// calls too.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/fortran.hpp"
#include "mpi/thread_lock.hpp"

#define FTMPI_FORTRAN extern "C" __attribute__((visibility("default")))

using F = MPI_Fint;

// The common blocks of mpif.h. A program's own definition takes precedence (the dynamic linker binds
// these names to the executable's copy), so the addresses compared below are the program's. Aligned
// as gfortran aligns a common block (16), which the modules compiled into libftmpi expect.
#define FTMPI_COMMON __attribute__((visibility("default"))) alignas(16)
extern "C" {  // definitions: `extern "C" F x;` alone would only declare them
FTMPI_COMMON F ftmpi_f_status_ignore_[6];
FTMPI_COMMON F ftmpi_f_statuses_ignore_[6];
FTMPI_COMMON F ftmpi_f_in_place_;
FTMPI_COMMON F ftmpi_f_bottom_;
FTMPI_COMMON F ftmpi_f_errcodes_ignore_[1];
FTMPI_COMMON F ftmpi_f_unweighted_[1];
FTMPI_COMMON F ftmpi_f_weights_empty_[1];
}

namespace ftmpi::mpi::fortran {

void* buffer(void* p) noexcept {
  if (p == &ftmpi_f_in_place_) return MPI_IN_PLACE;
  if (p == &ftmpi_f_bottom_) return MPI_BOTTOM;
  return p;
}

bool ignores_status(const F* f) noexcept { return f == ftmpi_f_status_ignore_ || f == ftmpi_f_statuses_ignore_; }

MPI_Status status_in(const F* f) noexcept {
  MPI_Status c{};
  std::memcpy(&c, f, sizeof c);
  return c;
}

std::string text(const char* s, std::size_t length) {
  std::size_t n = length;
  while (n > 0 && s[n - 1] == ' ') --n;
  return std::string(s, n);
}

}  // namespace ftmpi::mpi::fortran

using namespace ftmpi::mpi::fortran;

namespace {

static_assert(sizeof(MPI_Status) == 6 * sizeof(F), "MPI_STATUS_SIZE in mpif.h is 6");

// A distributed graph's weights: mpif.h's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are common blocks too.
int* weights(F* p) noexcept {
  if (p == ftmpi_f_unweighted_) return MPI_UNWEIGHTED;
  if (p == ftmpi_f_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return p;
}

// An info key or value: Fortran's leading and trailing blanks are not part of it (MPI-3.1 section 9).
std::string trimmed(const char* s, std::size_t length) {
  std::size_t first = 0;
  while (first < length && s[first] == ' ') ++first;
  return text(s + first, length - first);
}
// A C string into a Fortran one: copied and blank-padded.
void fill(char* out, std::size_t length, const char* in, int n) noexcept {
  const std::size_t k = std::min(length, static_cast<std::size_t>(n < 0 ? 0 : n));
  std::memcpy(out, in, k);
  std::memset(out + k, ' ', length - k);
}

// Requests: index 0 is MPI_REQUEST_NULL; a request keeps its index until it is freed.
struct RequestTable {
  std::vector<MPI_Request> slots{MPI_REQUEST_NULL};
  std::vector<F> free;
  std::unordered_map<MPI_Request, F> index;
};
RequestTable& requests() {
  static RequestTable* table = new RequestTable;  // never destroyed: calls may come from atexit handlers
  return *table;
}

F to_fortran(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return 0;
  const ftmpi::mpi::ThreadLockGuard lock;
  RequestTable& t = requests();
  if (auto it = t.index.find(r); it != t.index.end()) return it->second;
  F f = 0;
  if (!t.free.empty()) {
    f = t.free.back();
    t.free.pop_back();
    t.slots[static_cast<std::size_t>(f)] = r;
  } else {
    f = static_cast<F>(t.slots.size());
    t.slots.push_back(r);
  }
  t.index.emplace(r, f);
  return f;
}

MPI_Request to_c(F f) {
  const ftmpi::mpi::ThreadLockGuard lock;
  RequestTable& t = requests();
  if (f <= 0 || static_cast<std::size_t>(f) >= t.slots.size()) return MPI_REQUEST_NULL;
  return t.slots[static_cast<std::size_t>(f)];
}

// After a call that may have freed the request behind `f` (it set the C handle to null): gives the
// index back and sets `f` to MPI_REQUEST_NULL.
void settle(F& f, MPI_Request now) {
  if (now != MPI_REQUEST_NULL || f == 0) return;
  const ftmpi::mpi::ThreadLockGuard lock;
  RequestTable& t = requests();
  if (static_cast<std::size_t>(f) < t.slots.size()) {
    t.index.erase(t.slots[static_cast<std::size_t>(f)]);
    t.slots[static_cast<std::size_t>(f)] = MPI_REQUEST_NULL;
    t.free.push_back(f);
  }
  f = 0;
}

// An array of requests for a multi-completion call, written back after it.
class Requests {
 public:
  Requests(F* f, F count) : f_(f), c_(static_cast<std::size_t>(count < 0 ? 0 : count)) {
    for (std::size_t i = 0; i < c_.size(); ++i) c_[i] = to_c(f_[i]);
  }
  ~Requests() {
    for (std::size_t i = 0; i < c_.size(); ++i) settle(f_[i], c_[i]);
  }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  MPI_Request* get() noexcept { return c_.data(); }

 private:
  F* f_;
  std::vector<MPI_Request> c_;
};

// Statuses of a multi-completion call.
class Statuses {
 public:
  Statuses(F* f, F count) : f_(f), c_(ignores_status(f) ? 0 : static_cast<std::size_t>(count < 0 ? 0 : count)) {
    if (!c_.empty()) std::memcpy(c_.data(), f_, c_.size() * sizeof(MPI_Status));
  }
  ~Statuses() {
    if (!c_.empty()) std::memcpy(f_, c_.data(), c_.size() * sizeof(MPI_Status));
  }
  Statuses(const Statuses&) = delete;
  Statuses& operator=(const Statuses&) = delete;
  MPI_Status* get() noexcept { return ignores_status(f_) ? MPI_STATUSES_IGNORE : c_.data(); }

 private:
  F* f_;
  std::vector<MPI_Status> c_;
};

// The communicator attributes MPI predefines: C gets a pointer to their int value, Fortran the value.
bool predefined(F keyval) noexcept { return ftmpi::mpi::is_predefined_keyval(keyval); }

// One request out of a nonblocking call.
#define REQUEST_OUT(call)       \
  MPI_Request c_request = nullptr; \
  *ierr = (call);               \
  *request = to_fortran(c_request)

}  // namespace

// ---- the C API's handle conversions (MPI-3.1 section 17.2.4) ----------------------------------------

extern "C" {
MPI_Fint PMPI_Request_c2f(MPI_Request request) { return to_fortran(request); }
#pragma weak MPI_Request_c2f = PMPI_Request_c2f
MPI_Request PMPI_Request_f2c(MPI_Fint request) { return to_c(request); }
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
MPI_Fint PMPI_Comm_c2f(MPI_Comm comm) { return comm; }
#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
MPI_Comm PMPI_Comm_f2c(MPI_Fint comm) { return comm; }
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype) { return datatype; }
#pragma weak MPI_Type_c2f = PMPI_Type_c2f
MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype) { return datatype; }
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
MPI_Fint PMPI_Group_c2f(MPI_Group group) { return group; }
#pragma weak MPI_Group_c2f = PMPI_Group_c2f
MPI_Group PMPI_Group_f2c(MPI_Fint group) { return group; }
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
MPI_Fint PMPI_Op_c2f(MPI_Op op) { return op; }
#pragma weak MPI_Op_c2f = PMPI_Op_c2f
MPI_Op PMPI_Op_f2c(MPI_Fint op) { return op; }
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
MPI_Fint PMPI_Message_c2f(MPI_Message message) { return message; }
#pragma weak MPI_Message_c2f = PMPI_Message_c2f
MPI_Message PMPI_Message_f2c(MPI_Fint message) { return message; }
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
MPI_Fint PMPI_Info_c2f(MPI_Info info) { return info; }
#pragma weak MPI_Info_c2f = PMPI_Info_c2f
MPI_Info PMPI_Info_f2c(MPI_Fint info) { return info; }
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler) { return errhandler; }
#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler) { return errhandler; }
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (c_status == nullptr || f_status == nullptr || c_status == MPI_STATUS_IGNORE) return MPI_ERR_ARG;
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
#pragma weak MPI_Status_c2f = PMPI_Status_c2f
int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (c_status == nullptr || f_status == nullptr || ignores_status(f_status)) return MPI_ERR_ARG;
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
#pragma weak MPI_Status_f2c = PMPI_Status_f2c
// mpi_f08's status is the INTEGER status's six INTEGERs: the same copies.
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) && sizeof(MPI_Status) == 6 * sizeof(MPI_Fint));
int PMPI_Status_f082c(const MPI_F08_status* f08_status, MPI_Status* c_status) {
  return PMPI_Status_f2c(reinterpret_cast<const MPI_Fint*>(f08_status), c_status);
}
#pragma weak MPI_Status_f082c = PMPI_Status_f082c
int PMPI_Status_c2f08(const MPI_Status* c_status, MPI_F08_status* f08_status) {
  return PMPI_Status_c2f(c_status, reinterpret_cast<MPI_Fint*>(f08_status));
}
#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
int PMPI_Status_f082f(const MPI_F08_status* f08_status, MPI_Fint* f_status) {
  const auto* from = reinterpret_cast<const MPI_Fint*>(f08_status);
  if (from == nullptr || f_status == nullptr || ignores_status(from) || ignores_status(f_status)) return MPI_ERR_ARG;
  std::memcpy(f_status, from, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
#pragma weak MPI_Status_f082f = PMPI_Status_f082f
int PMPI_Status_f2f08(const MPI_Fint* f_status, MPI_F08_status* f08_status) {
  return PMPI_Status_f082f(reinterpret_cast<const MPI_F08_status*>(f_status), reinterpret_cast<MPI_Fint*>(f08_status));
}
#pragma weak MPI_Status_f2f08 = PMPI_Status_f2f08
}  // extern "C"

// ---- environment ------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_init_(F* ierr) { *ierr = MPI_Init(nullptr, nullptr); }
FTMPI_FORTRAN void mpi_init_thread_(F* required, F* provided, F* ierr) {
  *ierr = MPI_Init_thread(nullptr, nullptr, *required, provided);
}
FTMPI_FORTRAN void mpi_finalize_(F* ierr) { *ierr = MPI_Finalize(); }
FTMPI_FORTRAN void mpi_initialized_(F* flag, F* ierr) { *ierr = MPI_Initialized(flag); }
FTMPI_FORTRAN void mpi_finalized_(F* flag, F* ierr) { *ierr = MPI_Finalized(flag); }
FTMPI_FORTRAN void mpi_abort_(F* comm, F* code, F* ierr) { *ierr = MPI_Abort(*comm, *code); }
FTMPI_FORTRAN void mpi_query_thread_(F* provided, F* ierr) { *ierr = MPI_Query_thread(provided); }
FTMPI_FORTRAN void mpi_is_thread_main_(F* flag, F* ierr) { *ierr = MPI_Is_thread_main(flag); }
FTMPI_FORTRAN void mpi_get_version_(F* version, F* subversion, F* ierr) { *ierr = MPI_Get_version(version, subversion); }
FTMPI_FORTRAN void mpi_get_processor_name_(char* name, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_PROCESSOR_NAME];
  *ierr = MPI_Get_processor_name(c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(name, length, c, *resultlen);
}
FTMPI_FORTRAN void mpi_get_library_version_(char* version, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_LIBRARY_VERSION_STRING];
  *ierr = MPI_Get_library_version(c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(version, length, c, *resultlen);
}
FTMPI_FORTRAN double mpi_wtime_() { return MPI_Wtime(); }
FTMPI_FORTRAN double mpi_wtick_() { return MPI_Wtick(); }

// ---- errors -----------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_error_string_(F* code, char* text_out, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_ERROR_STRING];
  *ierr = MPI_Error_string(*code, c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(text_out, length, c, *resultlen);
}
FTMPI_FORTRAN void mpi_error_class_(F* code, F* error_class, F* ierr) { *ierr = MPI_Error_class(*code, error_class); }
FTMPI_FORTRAN void mpi_comm_set_errhandler_(F* comm, F* handler, F* ierr) {
  *ierr = MPI_Comm_set_errhandler(*comm, *handler);
}
FTMPI_FORTRAN void mpi_comm_get_errhandler_(F* comm, F* handler, F* ierr) {
  *ierr = MPI_Comm_get_errhandler(*comm, handler);
}
FTMPI_FORTRAN void mpi_errhandler_free_(F* handler, F* ierr) { *ierr = MPI_Errhandler_free(handler); }

// ---- point-to-point ---------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_send_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  *ierr = MPI_Send(buffer(buf), *count, *type, *dest, *tag, *comm);
}
FTMPI_FORTRAN void mpi_ssend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  *ierr = MPI_Ssend(buffer(buf), *count, *type, *dest, *tag, *comm);
}
FTMPI_FORTRAN void mpi_rsend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  *ierr = MPI_Rsend(buffer(buf), *count, *type, *dest, *tag, *comm);
}
FTMPI_FORTRAN void mpi_bsend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  *ierr = MPI_Bsend(buffer(buf), *count, *type, *dest, *tag, *comm);
}
FTMPI_FORTRAN void mpi_recv_(void* buf, F* count, F* type, F* source, F* tag, F* comm, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Recv(buffer(buf), *count, *type, *source, *tag, *comm, s.get());
}
FTMPI_FORTRAN void mpi_isend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Isend(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_issend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Issend(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_irsend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Irsend(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_ibsend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ibsend(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_irecv_(void* buf, F* count, F* type, F* source, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Irecv(buffer(buf), *count, *type, *source, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_send_init_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Send_init(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_recv_init_(void* buf, F* count, F* type, F* source, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Recv_init(buffer(buf), *count, *type, *source, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_sendrecv_(void* sendbuf, F* sendcount, F* sendtype, F* dest, F* sendtag, void* recvbuf,
                                 F* recvcount, F* recvtype, F* source, F* recvtag, F* comm, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Sendrecv(buffer(sendbuf), *sendcount, *sendtype, *dest, *sendtag, buffer(recvbuf), *recvcount, *recvtype,
                       *source, *recvtag, *comm, s.get());
}
FTMPI_FORTRAN void mpi_sendrecv_replace_(void* buf, F* count, F* type, F* dest, F* sendtag, F* source, F* recvtag,
                                         F* comm, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Sendrecv_replace(buffer(buf), *count, *type, *dest, *sendtag, *source, *recvtag, *comm, s.get());
}
// MPI-4.
FTMPI_FORTRAN void mpi_isendrecv_(void* sendbuf, F* sendcount, F* sendtype, F* dest, F* sendtag, void* recvbuf,
                                  F* recvcount, F* recvtype, F* source, F* recvtag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Isendrecv(buffer(sendbuf), *sendcount, *sendtype, *dest, *sendtag, buffer(recvbuf), *recvcount,
                            *recvtype, *source, *recvtag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_isendrecv_replace_(void* buf, F* count, F* type, F* dest, F* sendtag, F* source, F* recvtag,
                                          F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Isendrecv_replace(buffer(buf), *count, *type, *dest, *sendtag, *source, *recvtag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_probe_(F* source, F* tag, F* comm, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Probe(*source, *tag, *comm, s.get());
}
FTMPI_FORTRAN void mpi_iprobe_(F* source, F* tag, F* comm, F* flag, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Iprobe(*source, *tag, *comm, flag, s.get());
}
FTMPI_FORTRAN void mpi_mprobe_(F* source, F* tag, F* comm, F* message, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Mprobe(*source, *tag, *comm, message, s.get());
}
FTMPI_FORTRAN void mpi_improbe_(F* source, F* tag, F* comm, F* flag, F* message, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Improbe(*source, *tag, *comm, flag, message, s.get());
}
FTMPI_FORTRAN void mpi_mrecv_(void* buf, F* count, F* type, F* message, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Mrecv(buffer(buf), *count, *type, message, s.get());
}
FTMPI_FORTRAN void mpi_imrecv_(void* buf, F* count, F* type, F* message, F* request, F* ierr) {
  REQUEST_OUT(MPI_Imrecv(buffer(buf), *count, *type, message, &c_request));
}
FTMPI_FORTRAN void mpi_get_count_(F* status, F* type, F* count, F* ierr) {
  const MPI_Status c = status_in(status);
  *ierr = MPI_Get_count(&c, *type, count);
}
FTMPI_FORTRAN void mpi_get_elements_(F* status, F* type, F* count, F* ierr) {
  const MPI_Status c = status_in(status);
  *ierr = MPI_Get_elements(&c, *type, count);
}
FTMPI_FORTRAN void mpi_buffer_attach_(void* buf, F* size, F* ierr) { *ierr = MPI_Buffer_attach(buf, *size); }
// Fortran gets no address back (MPI-3.1 section 3.6.1): the buffer is the one it attached.
FTMPI_FORTRAN void mpi_buffer_detach_(void* /*buf*/, F* size, F* ierr) {
  void* address = nullptr;
  *ierr = MPI_Buffer_detach(&address, size);
}
// MPI-4.1's flushes and communicator buffers (MPI_BUFFER_AUTOMATIC is C's only here).
FTMPI_FORTRAN void mpi_buffer_flush_(F* ierr) { *ierr = MPI_Buffer_flush(); }
FTMPI_FORTRAN void mpi_buffer_iflush_(F* request, F* ierr) { REQUEST_OUT(MPI_Buffer_iflush(&c_request)); }
FTMPI_FORTRAN void mpi_comm_attach_buffer_(F* comm, void* buf, F* size, F* ierr) {
  *ierr = MPI_Comm_attach_buffer(*comm, buf, *size);
}
FTMPI_FORTRAN void mpi_comm_detach_buffer_(F* comm, void* /*buf*/, F* size, F* ierr) {
  void* address = nullptr;
  *ierr = MPI_Comm_detach_buffer(*comm, &address, size);
}
FTMPI_FORTRAN void mpi_comm_flush_buffer_(F* comm, F* ierr) { *ierr = MPI_Comm_flush_buffer(*comm); }
FTMPI_FORTRAN void mpi_comm_iflush_buffer_(F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Comm_iflush_buffer(*comm, &c_request));
}

// ---- completion -------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_wait_(F* request, F* status, F* ierr) {
  MPI_Request c = to_c(*request);
  StatusOut s(status);
  *ierr = MPI_Wait(&c, s.get());
  settle(*request, c);
}
FTMPI_FORTRAN void mpi_test_(F* request, F* flag, F* status, F* ierr) {
  MPI_Request c = to_c(*request);
  StatusOut s(status);
  *ierr = MPI_Test(&c, flag, s.get());
  settle(*request, c);
}
FTMPI_FORTRAN void mpi_waitall_(F* count, F* array, F* statuses, F* ierr) {
  Requests r(array, *count);
  Statuses s(statuses, *count);
  *ierr = MPI_Waitall(*count, r.get(), s.get());
}
FTMPI_FORTRAN void mpi_testall_(F* count, F* array, F* flag, F* statuses, F* ierr) {
  Requests r(array, *count);
  Statuses s(statuses, *count);
  *ierr = MPI_Testall(*count, r.get(), flag, s.get());
}
// Fortran's indices count from 1 (MPI_UNDEFINED stays).
FTMPI_FORTRAN void mpi_waitany_(F* count, F* array, F* index, F* status, F* ierr) {
  Requests r(array, *count);
  StatusOut s(status);
  *ierr = MPI_Waitany(*count, r.get(), index, s.get());
  if (*index != MPI_UNDEFINED) ++*index;
}
FTMPI_FORTRAN void mpi_testany_(F* count, F* array, F* index, F* flag, F* status, F* ierr) {
  Requests r(array, *count);
  StatusOut s(status);
  *ierr = MPI_Testany(*count, r.get(), index, flag, s.get());
  if (*index != MPI_UNDEFINED) ++*index;
}
FTMPI_FORTRAN void mpi_waitsome_(F* count, F* array, F* outcount, F* indices, F* statuses, F* ierr) {
  Requests r(array, *count);
  Statuses s(statuses, *count);
  *ierr = MPI_Waitsome(*count, r.get(), outcount, indices, s.get());
  for (F i = 0; *outcount != MPI_UNDEFINED && i < *outcount; ++i) ++indices[i];
}
FTMPI_FORTRAN void mpi_testsome_(F* count, F* array, F* outcount, F* indices, F* statuses, F* ierr) {
  Requests r(array, *count);
  Statuses s(statuses, *count);
  *ierr = MPI_Testsome(*count, r.get(), outcount, indices, s.get());
  for (F i = 0; *outcount != MPI_UNDEFINED && i < *outcount; ++i) ++indices[i];
}
FTMPI_FORTRAN void mpi_start_(F* request, F* ierr) {
  MPI_Request c = to_c(*request);
  *ierr = MPI_Start(&c);
}
FTMPI_FORTRAN void mpi_startall_(F* count, F* array, F* ierr) {
  Requests r(array, *count);
  *ierr = MPI_Startall(*count, r.get());
}
FTMPI_FORTRAN void mpi_request_free_(F* request, F* ierr) {
  MPI_Request c = to_c(*request);
  *ierr = MPI_Request_free(&c);
  settle(*request, c);
}
FTMPI_FORTRAN void mpi_cancel_(F* request, F* ierr) {
  MPI_Request c = to_c(*request);
  *ierr = MPI_Cancel(&c);
}
FTMPI_FORTRAN void mpi_test_cancelled_(F* status, F* flag, F* ierr) {
  const MPI_Status c = status_in(status);
  *ierr = MPI_Test_cancelled(&c, flag);
}

// ---- collectives ------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_barrier_(F* comm, F* ierr) { *ierr = MPI_Barrier(*comm); }
FTMPI_FORTRAN void mpi_ibarrier_(F* comm, F* request, F* ierr) { REQUEST_OUT(MPI_Ibarrier(*comm, &c_request)); }
FTMPI_FORTRAN void mpi_bcast_(void* buf, F* count, F* type, F* root, F* comm, F* ierr) {
  *ierr = MPI_Bcast(buffer(buf), *count, *type, *root, *comm);
}
FTMPI_FORTRAN void mpi_ibcast_(void* buf, F* count, F* type, F* root, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ibcast(buffer(buf), *count, *type, *root, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_reduce_(void* send, void* recv, F* count, F* type, F* op, F* root, F* comm, F* ierr) {
  *ierr = MPI_Reduce(buffer(send), buffer(recv), *count, *type, *op, *root, *comm);
}
FTMPI_FORTRAN void mpi_ireduce_(void* send, void* recv, F* count, F* type, F* op, F* root, F* comm, F* request,
                                F* ierr) {
  REQUEST_OUT(MPI_Ireduce(buffer(send), buffer(recv), *count, *type, *op, *root, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_allreduce_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* ierr) {
  *ierr = MPI_Allreduce(buffer(send), buffer(recv), *count, *type, *op, *comm);
}
// MPI-4's persistent collectives most programs use.
FTMPI_FORTRAN void mpi_barrier_init_(F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Barrier_init(*comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_bcast_init_(void* buf, F* count, F* type, F* root, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Bcast_init(buffer(buf), *count, *type, *root, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_reduce_init_(void* send, void* recv, F* count, F* type, F* op, F* root, F* comm, F* info,
                                    F* request, F* ierr) {
  REQUEST_OUT(MPI_Reduce_init(buffer(send), buffer(recv), *count, *type, *op, *root, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_allreduce_init_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* info, F* request,
                                       F* ierr) {
  REQUEST_OUT(MPI_Allreduce_init(buffer(send), buffer(recv), *count, *type, *op, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_iallreduce_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Iallreduce(buffer(send), buffer(recv), *count, *type, *op, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_scan_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* ierr) {
  *ierr = MPI_Scan(buffer(send), buffer(recv), *count, *type, *op, *comm);
}
FTMPI_FORTRAN void mpi_exscan_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* ierr) {
  *ierr = MPI_Exscan(buffer(send), buffer(recv), *count, *type, *op, *comm);
}
FTMPI_FORTRAN void mpi_reduce_scatter_block_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* ierr) {
  *ierr = MPI_Reduce_scatter_block(buffer(send), buffer(recv), *count, *type, *op, *comm);
}
FTMPI_FORTRAN void mpi_reduce_scatter_(void* send, void* recv, F* counts, F* type, F* op, F* comm, F* ierr) {
  *ierr = MPI_Reduce_scatter(buffer(send), buffer(recv), counts, *type, *op, *comm);
}
FTMPI_FORTRAN void mpi_gather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root, F* comm,
                               F* ierr) {
  *ierr = MPI_Gather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm);
}
FTMPI_FORTRAN void mpi_igather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root, F* comm,
                                F* request, F* ierr) {
  REQUEST_OUT(MPI_Igather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_gatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype, F* root,
                                F* comm, F* ierr) {
  *ierr = MPI_Gatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *root, *comm);
}
FTMPI_FORTRAN void mpi_scatter_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root, F* comm,
                                F* ierr) {
  *ierr = MPI_Scatter(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm);
}
FTMPI_FORTRAN void mpi_iscatter_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root, F* comm,
                                 F* request, F* ierr) {
  REQUEST_OUT(MPI_Iscatter(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_scatterv_(void* send, F* scounts, F* displs, F* stype, void* recv, F* rcount, F* rtype, F* root,
                                 F* comm, F* ierr) {
  *ierr = MPI_Scatterv(buffer(send), scounts, displs, *stype, buffer(recv), *rcount, *rtype, *root, *comm);
}
FTMPI_FORTRAN void mpi_allgather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm, F* ierr) {
  *ierr = MPI_Allgather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_iallgather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                   F* request, F* ierr) {
  REQUEST_OUT(MPI_Iallgather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_allgatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype,
                                   F* comm, F* ierr) {
  *ierr = MPI_Allgatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_alltoall_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm, F* ierr) {
  *ierr = MPI_Alltoall(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_ialltoall_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                  F* request, F* ierr) {
  REQUEST_OUT(MPI_Ialltoall(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_alltoallv_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts, F* rdispls,
                                  F* rtype, F* comm, F* ierr) {
  *ierr = MPI_Alltoallv(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_alltoallw_(void* send, F* scounts, F* sdispls, F* stypes, void* recv, F* rcounts, F* rdispls,
                                  F* rtypes, F* comm, F* ierr) {
  *ierr = MPI_Alltoallw(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls, rtypes, *comm);
}
FTMPI_FORTRAN void mpi_op_create_(MPI_User_function* function, F* commute, F* op, F* ierr) {
  *ierr = MPI_Op_create(function, *commute != 0, op);
}
FTMPI_FORTRAN void mpi_op_free_(F* op, F* ierr) { *ierr = MPI_Op_free(op); }

// ---- communicators and groups -----------------------------------------------------------------------

FTMPI_FORTRAN void mpi_comm_rank_(F* comm, F* rank, F* ierr) { *ierr = MPI_Comm_rank(*comm, rank); }
FTMPI_FORTRAN void mpi_comm_size_(F* comm, F* size, F* ierr) { *ierr = MPI_Comm_size(*comm, size); }
FTMPI_FORTRAN void mpi_comm_dup_(F* comm, F* newcomm, F* ierr) { *ierr = MPI_Comm_dup(*comm, newcomm); }
// The handle is written into the program's variable when the request completes (it must stay in place).
FTMPI_FORTRAN void mpi_comm_idup_(F* comm, F* newcomm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Comm_idup(*comm, newcomm, &c_request));
}
FTMPI_FORTRAN void mpi_comm_dup_with_info_(F* comm, F* info, F* newcomm, F* ierr) {
  *ierr = MPI_Comm_dup_with_info(*comm, *info, newcomm);
}
FTMPI_FORTRAN void mpi_comm_idup_with_info_(F* comm, F* info, F* newcomm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Comm_idup_with_info(*comm, *info, newcomm, &c_request));
}
FTMPI_FORTRAN void mpi_comm_set_info_(F* comm, F* info, F* ierr) { *ierr = MPI_Comm_set_info(*comm, *info); }
FTMPI_FORTRAN void mpi_comm_get_info_(F* comm, F* info, F* ierr) { *ierr = MPI_Comm_get_info(*comm, info); }
FTMPI_FORTRAN void mpi_comm_disconnect_(F* comm, F* ierr) { *ierr = MPI_Comm_disconnect(comm); }
FTMPI_FORTRAN void mpi_comm_split_(F* comm, F* color, F* key, F* newcomm, F* ierr) {
  *ierr = MPI_Comm_split(*comm, *color, *key, newcomm);
}
FTMPI_FORTRAN void mpi_comm_split_type_(F* comm, F* type, F* key, F* info, F* newcomm, F* ierr) {
  *ierr = MPI_Comm_split_type(*comm, *type, *key, *info, newcomm);
}
FTMPI_FORTRAN void mpi_comm_create_(F* comm, F* group, F* newcomm, F* ierr) {
  *ierr = MPI_Comm_create(*comm, *group, newcomm);
}
FTMPI_FORTRAN void mpi_comm_create_group_(F* comm, F* group, F* tag, F* newcomm, F* ierr) {
  *ierr = MPI_Comm_create_group(*comm, *group, *tag, newcomm);
}
FTMPI_FORTRAN void mpi_comm_free_(F* comm, F* ierr) { *ierr = MPI_Comm_free(comm); }
FTMPI_FORTRAN void mpi_comm_compare_(F* a, F* b, F* result, F* ierr) { *ierr = MPI_Comm_compare(*a, *b, result); }
FTMPI_FORTRAN void mpi_comm_group_(F* comm, F* group, F* ierr) { *ierr = MPI_Comm_group(*comm, group); }
FTMPI_FORTRAN void mpi_comm_test_inter_(F* comm, F* flag, F* ierr) { *ierr = MPI_Comm_test_inter(*comm, flag); }
FTMPI_FORTRAN void mpi_comm_remote_size_(F* comm, F* size, F* ierr) { *ierr = MPI_Comm_remote_size(*comm, size); }
FTMPI_FORTRAN void mpi_comm_remote_group_(F* comm, F* group, F* ierr) { *ierr = MPI_Comm_remote_group(*comm, group); }
FTMPI_FORTRAN void mpi_intercomm_create_(F* local, F* local_leader, F* peer, F* remote_leader, F* tag, F* newcomm,
                                         F* ierr) {
  *ierr = MPI_Intercomm_create(*local, *local_leader, *peer, *remote_leader, *tag, newcomm);
}
FTMPI_FORTRAN void mpi_intercomm_merge_(F* inter, F* high, F* newcomm, F* ierr) {
  *ierr = MPI_Intercomm_merge(*inter, *high != 0, newcomm);
}
FTMPI_FORTRAN void mpi_comm_set_name_(F* comm, const char* name, F* ierr, std::size_t length) {
  *ierr = MPI_Comm_set_name(*comm, text(name, length).c_str());
}
FTMPI_FORTRAN void mpi_comm_get_name_(F* comm, char* name, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_OBJECT_NAME];
  *ierr = MPI_Comm_get_name(*comm, c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(name, length, c, *resultlen);
}
// Attribute values are INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran: the predefined ones are given by value.
FTMPI_FORTRAN void mpi_comm_get_attr_(F* comm, F* keyval, MPI_Aint* value, F* flag, F* ierr) {
  void* c = nullptr;
  *ierr = MPI_Comm_get_attr(*comm, *keyval, &c, flag);
  if (*ierr == MPI_SUCCESS && *flag != 0) {
    *value = predefined(*keyval) ? *static_cast<int*>(c) : reinterpret_cast<MPI_Aint>(c);
  }
}
FTMPI_FORTRAN void mpi_group_size_(F* group, F* size, F* ierr) { *ierr = MPI_Group_size(*group, size); }
FTMPI_FORTRAN void mpi_group_rank_(F* group, F* rank, F* ierr) { *ierr = MPI_Group_rank(*group, rank); }
FTMPI_FORTRAN void mpi_group_free_(F* group, F* ierr) { *ierr = MPI_Group_free(group); }
FTMPI_FORTRAN void mpi_group_incl_(F* group, F* n, F* ranks, F* newgroup, F* ierr) {
  *ierr = MPI_Group_incl(*group, *n, ranks, newgroup);
}
FTMPI_FORTRAN void mpi_group_excl_(F* group, F* n, F* ranks, F* newgroup, F* ierr) {
  *ierr = MPI_Group_excl(*group, *n, ranks, newgroup);
}
FTMPI_FORTRAN void mpi_group_translate_ranks_(F* a, F* n, F* ranks_a, F* b, F* ranks_b, F* ierr) {
  *ierr = MPI_Group_translate_ranks(*a, *n, ranks_a, *b, ranks_b);
}
FTMPI_FORTRAN void mpi_group_compare_(F* a, F* b, F* result, F* ierr) { *ierr = MPI_Group_compare(*a, *b, result); }
FTMPI_FORTRAN void mpi_group_union_(F* a, F* b, F* newgroup, F* ierr) { *ierr = MPI_Group_union(*a, *b, newgroup); }
FTMPI_FORTRAN void mpi_group_intersection_(F* a, F* b, F* newgroup, F* ierr) {
  *ierr = MPI_Group_intersection(*a, *b, newgroup);
}
FTMPI_FORTRAN void mpi_group_difference_(F* a, F* b, F* newgroup, F* ierr) {
  *ierr = MPI_Group_difference(*a, *b, newgroup);
}

// ---- topologies -------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_dims_create_(F* nnodes, F* ndims, F* dims, F* ierr) { *ierr = MPI_Dims_create(*nnodes, *ndims, dims); }
FTMPI_FORTRAN void mpi_cart_create_(F* comm, F* ndims, F* dims, F* periods, F* reorder, F* newcomm, F* ierr) {
  *ierr = MPI_Cart_create(*comm, *ndims, dims, periods, *reorder != 0, newcomm);
}
FTMPI_FORTRAN void mpi_cart_coords_(F* comm, F* rank, F* maxdims, F* coords, F* ierr) {
  *ierr = MPI_Cart_coords(*comm, *rank, *maxdims, coords);
}
FTMPI_FORTRAN void mpi_cart_rank_(F* comm, F* coords, F* rank, F* ierr) { *ierr = MPI_Cart_rank(*comm, coords, rank); }
FTMPI_FORTRAN void mpi_cart_map_(F* comm, F* ndims, F* dims, F* periods, F* newrank, F* ierr) {
  *ierr = MPI_Cart_map(*comm, *ndims, dims, periods, newrank);
}
FTMPI_FORTRAN void mpi_cart_shift_(F* comm, F* direction, F* disp, F* source, F* dest, F* ierr) {
  *ierr = MPI_Cart_shift(*comm, *direction, *disp, source, dest);
}
FTMPI_FORTRAN void mpi_cart_sub_(F* comm, F* remain, F* newcomm, F* ierr) { *ierr = MPI_Cart_sub(*comm, remain, newcomm); }
FTMPI_FORTRAN void mpi_cartdim_get_(F* comm, F* ndims, F* ierr) { *ierr = MPI_Cartdim_get(*comm, ndims); }
FTMPI_FORTRAN void mpi_cart_get_(F* comm, F* maxdims, F* dims, F* periods, F* coords, F* ierr) {
  *ierr = MPI_Cart_get(*comm, *maxdims, dims, periods, coords);
}

// ---- datatypes --------------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_type_contiguous_(F* count, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_contiguous(*count, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_vector_(F* count, F* blocklength, F* stride, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_vector(*count, *blocklength, *stride, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_indexed_(F* count, F* blocklengths, F* displs, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_indexed(*count, blocklengths, displs, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_create_struct_(F* count, F* blocklengths, MPI_Aint* displs, F* types, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_struct(*count, blocklengths, displs, types, newtype);
}
FTMPI_FORTRAN void mpi_type_create_resized_(F* old, MPI_Aint* lb, MPI_Aint* extent, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_resized(*old, *lb, *extent, newtype);
}
FTMPI_FORTRAN void mpi_type_create_subarray_(F* ndims, F* sizes, F* subsizes, F* starts, F* order, F* old, F* newtype,
                                             F* ierr) {
  *ierr = MPI_Type_create_subarray(*ndims, sizes, subsizes, starts, *order, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_dup_(F* old, F* newtype, F* ierr) { *ierr = MPI_Type_dup(*old, newtype); }
FTMPI_FORTRAN void mpi_type_commit_(F* type, F* ierr) { *ierr = MPI_Type_commit(type); }
FTMPI_FORTRAN void mpi_type_free_(F* type, F* ierr) { *ierr = MPI_Type_free(type); }
FTMPI_FORTRAN void mpi_type_size_(F* type, F* size, F* ierr) { *ierr = MPI_Type_size(*type, size); }
FTMPI_FORTRAN void mpi_type_get_extent_(F* type, MPI_Aint* lb, MPI_Aint* extent, F* ierr) {
  *ierr = MPI_Type_get_extent(*type, lb, extent);
}
FTMPI_FORTRAN void mpi_get_address_(void* location, MPI_Aint* address, F* ierr) {
  *ierr = MPI_Get_address(buffer(location), address);
}
// Functions (mpif.h declares their type): address arithmetic (MPI-3.1 section 4.1.5).
FTMPI_FORTRAN MPI_Aint mpi_aint_add_(MPI_Aint* base, MPI_Aint* disp) { return MPI_Aint_add(*base, *disp); }
FTMPI_FORTRAN MPI_Aint mpi_aint_diff_(MPI_Aint* addr1, MPI_Aint* addr2) { return MPI_Aint_diff(*addr1, *addr2); }
FTMPI_FORTRAN void mpi_pack_(void* in, F* count, F* type, void* out, F* outsize, F* position, F* comm, F* ierr) {
  *ierr = MPI_Pack(buffer(in), *count, *type, out, *outsize, position, *comm);
}
FTMPI_FORTRAN void mpi_unpack_(void* in, F* insize, F* position, void* out, F* count, F* type, F* comm, F* ierr) {
  *ierr = MPI_Unpack(in, *insize, position, buffer(out), *count, *type, *comm);
}
FTMPI_FORTRAN void mpi_pack_size_(F* count, F* type, F* comm, F* size, F* ierr) {
  *ierr = MPI_Pack_size(*count, *type, *comm, size);
}
FTMPI_FORTRAN void mpi_pack_external_(const char* datarep, void* in, F* count, F* type, void* out, MPI_Aint* outsize,
                                      MPI_Aint* position, F* ierr, std::size_t length) {
  *ierr = MPI_Pack_external(text(datarep, length).c_str(), buffer(in), *count, *type, out, *outsize, position);
}
FTMPI_FORTRAN void mpi_unpack_external_(const char* datarep, void* in, MPI_Aint* insize, MPI_Aint* position, void* out,
                                        F* count, F* type, F* ierr, std::size_t length) {
  *ierr = MPI_Unpack_external(text(datarep, length).c_str(), in, *insize, position, buffer(out), *count, *type);
}
FTMPI_FORTRAN void mpi_pack_external_size_(const char* datarep, F* count, F* type, MPI_Aint* size, F* ierr,
                                           std::size_t length) {
  *ierr = MPI_Pack_external_size(text(datarep, length).c_str(), *count, *type, size);
}

// ---- info objects -----------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_info_create_(F* info, F* ierr) { *ierr = MPI_Info_create(info); }
// Fortran's form has no argc/argv: the system's command line.
FTMPI_FORTRAN void mpi_info_create_env_(F* info, F* ierr) { *ierr = MPI_Info_create_env(0, nullptr, info); }
FTMPI_FORTRAN void mpi_info_set_(F* info, const char* key, const char* value, F* ierr, std::size_t key_length,
                                 std::size_t value_length) {
  *ierr = MPI_Info_set(*info, trimmed(key, key_length).c_str(), trimmed(value, value_length).c_str());
}
// The value is cut to valuelen characters (MPI-3.1 section 9: no room for a terminator in Fortran) and
// to the length of the program's variable.
FTMPI_FORTRAN void mpi_info_get_(F* info, const char* key, F* valuelen, char* value, F* flag, F* ierr,
                                 std::size_t key_length, std::size_t value_length) {
  const int n = *valuelen < 0 ? *valuelen : std::min(*valuelen, static_cast<F>(MPI_MAX_INFO_VAL));
  std::vector<char> c(static_cast<std::size_t>(n < 0 ? 0 : n) + 1, '\0');
  *ierr = MPI_Info_get(*info, trimmed(key, key_length).c_str(), n, c.data(), flag);
  if (*ierr == MPI_SUCCESS && *flag != 0) fill(value, value_length, c.data(), static_cast<int>(std::strlen(c.data())));
}
// MPI-4's MPI_INFO_GET_STRING: BUFLEN is the room in VALUE going in (0: VALUE untouched) and the value's
// length coming out; Fortran counts no terminating null (C's buflen does).
FTMPI_FORTRAN void mpi_info_get_string_(F* info, const char* key, F* buflen, char* value, F* flag, F* ierr,
                                        std::size_t key_length, std::size_t value_length) {
  if (*buflen < 0) {  // C's check and message, before anything is read
    *ierr = MPI_Info_get_string(*info, trimmed(key, key_length).c_str(), buflen, value, flag);
    return;
  }
  const std::string name = trimmed(key, key_length);
  int needed = 0;  // the value's length and its null
  *ierr = MPI_Info_get_string(*info, name.c_str(), &needed, nullptr, flag);
  if (*ierr != MPI_SUCCESS || *flag == 0) return;
  std::vector<char> c(static_cast<std::size_t>(needed));
  *ierr = MPI_Info_get_string(*info, name.c_str(), &needed, c.data(), flag);
  if (*ierr != MPI_SUCCESS) return;
  const int length = needed - 1;
  // The first BUFLEN characters, VALUE blank-padded after them as any Fortran string.
  if (*buflen > 0) fill(value, value_length, c.data(), std::min(length, static_cast<int>(*buflen)));
  *buflen = length;
}
FTMPI_FORTRAN void mpi_info_get_valuelen_(F* info, const char* key, F* valuelen, F* flag, F* ierr,
                                          std::size_t key_length) {
  *ierr = MPI_Info_get_valuelen(*info, trimmed(key, key_length).c_str(), valuelen, flag);
}
FTMPI_FORTRAN void mpi_info_get_nkeys_(F* info, F* nkeys, F* ierr) { *ierr = MPI_Info_get_nkeys(*info, nkeys); }
FTMPI_FORTRAN void mpi_info_get_nthkey_(F* info, F* n, char* key, F* ierr, std::size_t key_length) {
  char c[MPI_MAX_INFO_KEY + 1] = {};
  *ierr = MPI_Info_get_nthkey(*info, *n, c);
  if (*ierr == MPI_SUCCESS) fill(key, key_length, c, static_cast<int>(std::strlen(c)));
}
FTMPI_FORTRAN void mpi_info_delete_(F* info, const char* key, F* ierr, std::size_t key_length) {
  *ierr = MPI_Info_delete(*info, trimmed(key, key_length).c_str());
}
FTMPI_FORTRAN void mpi_info_dup_(F* info, F* newinfo, F* ierr) { *ierr = MPI_Info_dup(*info, newinfo); }
FTMPI_FORTRAN void mpi_info_free_(F* info, F* ierr) { *ierr = MPI_Info_free(info); }

// ---- user error handlers and error codes ------------------------------------------------------------

// SUBROUTINE HANDLER(COMM, ERROR_CODE) takes both by reference, as the C handler does: passed as it is.
FTMPI_FORTRAN void mpi_comm_create_errhandler_(MPI_Comm_errhandler_function* function, F* handler, F* ierr) {
  *ierr = MPI_Comm_create_errhandler(function, handler);
}
FTMPI_FORTRAN void mpi_comm_call_errhandler_(F* comm, F* code, F* ierr) {
  *ierr = MPI_Comm_call_errhandler(*comm, *code);
}
FTMPI_FORTRAN void mpi_add_error_class_(F* error_class, F* ierr) { *ierr = MPI_Add_error_class(error_class); }
FTMPI_FORTRAN void mpi_add_error_code_(F* error_class, F* code, F* ierr) {
  *ierr = MPI_Add_error_code(*error_class, code);
}
FTMPI_FORTRAN void mpi_add_error_string_(F* code, const char* string, F* ierr, std::size_t length) {
  *ierr = MPI_Add_error_string(*code, text(string, length).c_str());
}

// ---- attribute caching ------------------------------------------------------------------------------
// A Fortran attribute is an INTEGER(KIND=MPI_ADDRESS_KIND) (MPI-1's calls: an INTEGER) kept as the
// attribute's value itself. Fortran's copy and delete callbacks take every argument by reference, so
// C calls a trampoline, whose extra_state is a record with the program's procedures and extra_state.

// The predefined callbacks, as Fortran procedures (mpif.h declares them EXTERNAL).
FTMPI_FORTRAN void mpi_comm_null_copy_fn_(F* /*oldcomm*/, F* /*keyval*/, MPI_Aint* /*extra_state*/, MPI_Aint* /*in*/,
                                          MPI_Aint* /*out*/, F* flag, F* ierr) {
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
FTMPI_FORTRAN void mpi_comm_null_delete_fn_(F* /*comm*/, F* /*keyval*/, MPI_Aint* /*value*/, MPI_Aint* /*extra_state*/,
                                            F* ierr) {
  *ierr = MPI_SUCCESS;
}
FTMPI_FORTRAN void mpi_comm_dup_fn_(F* /*oldcomm*/, F* /*keyval*/, MPI_Aint* /*extra_state*/, MPI_Aint* in,
                                    MPI_Aint* out, F* flag, F* ierr) {
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}
FTMPI_FORTRAN void mpi_type_null_copy_fn_(F* oldtype, F* keyval, MPI_Aint* extra_state, MPI_Aint* in, MPI_Aint* out,
                                          F* flag, F* ierr) {
  mpi_comm_null_copy_fn_(oldtype, keyval, extra_state, in, out, flag, ierr);
}
FTMPI_FORTRAN void mpi_type_null_delete_fn_(F* type, F* keyval, MPI_Aint* value, MPI_Aint* extra_state, F* ierr) {
  mpi_comm_null_delete_fn_(type, keyval, value, extra_state, ierr);
}
FTMPI_FORTRAN void mpi_type_dup_fn_(F* oldtype, F* keyval, MPI_Aint* extra_state, MPI_Aint* in, MPI_Aint* out, F* flag,
                                    F* ierr) {
  mpi_comm_dup_fn_(oldtype, keyval, extra_state, in, out, flag, ierr);
}
FTMPI_FORTRAN void mpi_win_null_copy_fn_(F* oldwin, F* keyval, MPI_Aint* extra_state, MPI_Aint* in, MPI_Aint* out,
                                         F* flag, F* ierr) {
  mpi_comm_null_copy_fn_(oldwin, keyval, extra_state, in, out, flag, ierr);
}
FTMPI_FORTRAN void mpi_win_null_delete_fn_(F* win, F* keyval, MPI_Aint* value, MPI_Aint* extra_state, F* ierr) {
  mpi_comm_null_delete_fn_(win, keyval, value, extra_state, ierr);
}
FTMPI_FORTRAN void mpi_win_dup_fn_(F* oldwin, F* keyval, MPI_Aint* extra_state, MPI_Aint* in, MPI_Aint* out, F* flag,
                                   F* ierr) {
  mpi_comm_dup_fn_(oldwin, keyval, extra_state, in, out, flag, ierr);
}
FTMPI_FORTRAN void mpi_null_copy_fn_(F* /*oldcomm*/, F* /*keyval*/, F* /*extra_state*/, F* /*in*/, F* /*out*/, F* flag,
                                     F* ierr) {
  *flag = 0;
  *ierr = MPI_SUCCESS;
}
FTMPI_FORTRAN void mpi_null_delete_fn_(F* /*comm*/, F* /*keyval*/, F* /*value*/, F* /*extra_state*/, F* ierr) {
  *ierr = MPI_SUCCESS;
}
FTMPI_FORTRAN void mpi_dup_fn_(F* /*oldcomm*/, F* /*keyval*/, F* /*extra_state*/, F* in, F* out, F* flag, F* ierr) {
  *out = *in;
  *flag = 1;
  *ierr = MPI_SUCCESS;
}

namespace {

using CopyFn = void(F* old, F* keyval, MPI_Aint* extra_state, MPI_Aint* in, MPI_Aint* out, F* flag, F* ierr);
using DeleteFn = void(F* handle, F* keyval, MPI_Aint* value, MPI_Aint* extra_state, F* ierr);
using CopyFn1 = void(F* old, F* keyval, F* extra_state, F* in, F* out, F* flag, F* ierr);      // MPI-1's
using DeleteFn1 = void(F* handle, F* keyval, F* value, F* extra_state, F* ierr);                // MPI-1's
using AnyFn = void (*)();

// A keyval's Fortran side. Records are never freed: an attribute keeps its keyval's extra_state, and
// so may call back after MPI_COMM_FREE_KEYVAL.
struct FortranKeyval {
  CopyFn* copy = nullptr;
  DeleteFn* remove = nullptr;
  CopyFn1* copy1 = nullptr;
  DeleteFn1* remove1 = nullptr;
  MPI_Aint extra_state = 0;
  F extra_state1 = 0;
};
FortranKeyval* new_keyval_record(const FortranKeyval& k) {
  static std::deque<FortranKeyval>* records = new std::deque<FortranKeyval>;  // never destroyed, as requests()
  const ftmpi::mpi::ThreadLockGuard lock;
  records->push_back(k);
  return &records->back();
}

void* as_value(MPI_Aint v) noexcept { return reinterpret_cast<void*>(v); }
MPI_Aint as_aint(void* v) noexcept { return reinterpret_cast<MPI_Aint>(v); }

int copy_trampoline(int old, int keyval, void* extra_state, void* in, void* out, int* flag) {
  auto* k = static_cast<FortranKeyval*>(extra_state);
  F handle = old;
  F key = keyval;
  F f = 0;
  F ierr = MPI_SUCCESS;
  if (k->copy1 != nullptr) {
    F value_in = static_cast<F>(as_aint(in));
    F value_out = 0;
    k->copy1(&handle, &key, &k->extra_state1, &value_in, &value_out, &f, &ierr);
    *static_cast<void**>(out) = as_value(value_out);
  } else {
    MPI_Aint value_in = as_aint(in);
    MPI_Aint value_out = 0;
    k->copy(&handle, &key, &k->extra_state, &value_in, &value_out, &f, &ierr);
    *static_cast<void**>(out) = as_value(value_out);
  }
  *flag = f != 0 ? 1 : 0;
  return ierr;
}
int delete_trampoline(int handle, int keyval, void* value, void* extra_state) {
  auto* k = static_cast<FortranKeyval*>(extra_state);
  F h = handle;
  F key = keyval;
  F ierr = MPI_SUCCESS;
  if (k->remove1 != nullptr) {
    F v = static_cast<F>(as_aint(value));
    k->remove1(&h, &key, &v, &k->extra_state1, &ierr);
  } else {
    MPI_Aint v = as_aint(value);
    k->remove(&h, &key, &v, &k->extra_state, &ierr);
  }
  return ierr;
}

// The C callbacks for a keyval: the predefined procedures become C's own (no call back into Fortran),
// the program's the trampolines.
struct KeyvalCallbacks {
  MPI_Comm_copy_attr_function* copy;
  MPI_Comm_delete_attr_function* remove;
  void* extra_state;
};
KeyvalCallbacks keyval_callbacks(AnyFn copy, AnyFn remove, const FortranKeyval& record) {
  const auto is = [](AnyFn f, auto* g) { return f == reinterpret_cast<AnyFn>(g); };
  KeyvalCallbacks c{copy_trampoline, delete_trampoline, nullptr};
  if (is(copy, mpi_comm_null_copy_fn_) || is(copy, mpi_type_null_copy_fn_) || is(copy, mpi_win_null_copy_fn_) ||
      is(copy, mpi_null_copy_fn_)) {
    c.copy = nullptr;
  } else if (is(copy, mpi_comm_dup_fn_) || is(copy, mpi_type_dup_fn_) || is(copy, mpi_win_dup_fn_) ||
             is(copy, mpi_dup_fn_)) {
    c.copy = MPI_Comm_dup_fn;  // copies the value, whatever its width
  }
  if (is(remove, mpi_comm_null_delete_fn_) || is(remove, mpi_type_null_delete_fn_) ||
      is(remove, mpi_win_null_delete_fn_) || is(remove, mpi_null_delete_fn_)) {
    c.remove = nullptr;
  }
  if (c.copy == copy_trampoline || c.remove == delete_trampoline) c.extra_state = new_keyval_record(record);
  return c;
}
KeyvalCallbacks keyval_callbacks(CopyFn* copy, DeleteFn* remove, MPI_Aint extra_state) {
  FortranKeyval k;
  k.copy = copy;
  k.remove = remove;
  k.extra_state = extra_state;
  return keyval_callbacks(reinterpret_cast<AnyFn>(copy), reinterpret_cast<AnyFn>(remove), k);
}
KeyvalCallbacks keyval_callbacks(CopyFn1* copy, DeleteFn1* remove, F extra_state) {
  FortranKeyval k;
  k.copy1 = copy;
  k.remove1 = remove;
  k.extra_state1 = extra_state;
  return keyval_callbacks(reinterpret_cast<AnyFn>(copy), reinterpret_cast<AnyFn>(remove), k);
}

}  // namespace

FTMPI_FORTRAN void mpi_comm_create_keyval_(CopyFn* copy, DeleteFn* remove, F* keyval, MPI_Aint* extra_state, F* ierr) {
  const KeyvalCallbacks c = keyval_callbacks(copy, remove, *extra_state);
  *ierr = MPI_Comm_create_keyval(c.copy, c.remove, keyval, c.extra_state);
}
FTMPI_FORTRAN void mpi_comm_free_keyval_(F* keyval, F* ierr) { *ierr = MPI_Comm_free_keyval(keyval); }
FTMPI_FORTRAN void mpi_comm_set_attr_(F* comm, F* keyval, MPI_Aint* value, F* ierr) {
  *ierr = MPI_Comm_set_attr(*comm, *keyval, as_value(*value));
}
FTMPI_FORTRAN void mpi_comm_delete_attr_(F* comm, F* keyval, F* ierr) { *ierr = MPI_Comm_delete_attr(*comm, *keyval); }
FTMPI_FORTRAN void mpi_type_create_keyval_(CopyFn* copy, DeleteFn* remove, F* keyval, MPI_Aint* extra_state, F* ierr) {
  const KeyvalCallbacks c = keyval_callbacks(copy, remove, *extra_state);
  *ierr = MPI_Type_create_keyval(c.copy, c.remove, keyval, c.extra_state);
}
FTMPI_FORTRAN void mpi_type_free_keyval_(F* keyval, F* ierr) { *ierr = MPI_Type_free_keyval(keyval); }
FTMPI_FORTRAN void mpi_type_set_attr_(F* type, F* keyval, MPI_Aint* value, F* ierr) {
  *ierr = MPI_Type_set_attr(*type, *keyval, as_value(*value));
}
FTMPI_FORTRAN void mpi_type_get_attr_(F* type, F* keyval, MPI_Aint* value, F* flag, F* ierr) {
  void* c = nullptr;
  *ierr = MPI_Type_get_attr(*type, *keyval, &c, flag);
  if (*ierr == MPI_SUCCESS && *flag != 0) *value = as_aint(c);
}
FTMPI_FORTRAN void mpi_type_delete_attr_(F* type, F* keyval, F* ierr) { *ierr = MPI_Type_delete_attr(*type, *keyval); }
// MPI-1's names: the values and extra_state are INTEGERs.
FTMPI_FORTRAN void mpi_keyval_create_(CopyFn1* copy, DeleteFn1* remove, F* keyval, F* extra_state, F* ierr) {
  const KeyvalCallbacks c = keyval_callbacks(copy, remove, *extra_state);
  *ierr = MPI_Keyval_create(c.copy, c.remove, keyval, c.extra_state);
}
FTMPI_FORTRAN void mpi_keyval_free_(F* keyval, F* ierr) { *ierr = MPI_Keyval_free(keyval); }
FTMPI_FORTRAN void mpi_attr_put_(F* comm, F* keyval, F* value, F* ierr) {
  *ierr = MPI_Attr_put(*comm, *keyval, as_value(*value));
}
FTMPI_FORTRAN void mpi_attr_get_(F* comm, F* keyval, F* value, F* flag, F* ierr) {
  void* c = nullptr;
  *ierr = MPI_Attr_get(*comm, *keyval, &c, flag);
  if (*ierr == MPI_SUCCESS && *flag != 0) {
    *value = predefined(*keyval) ? *static_cast<int*>(c) : static_cast<F>(as_aint(c));
  }
}
FTMPI_FORTRAN void mpi_attr_delete_(F* comm, F* keyval, F* ierr) { *ierr = MPI_Attr_delete(*comm, *keyval); }

// ---- more datatypes ---------------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_type_create_hvector_(F* count, F* blocklength, MPI_Aint* stride, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_hvector(*count, *blocklength, *stride, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_create_hindexed_(F* count, F* blocklengths, MPI_Aint* displs, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_hindexed(*count, blocklengths, displs, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_create_indexed_block_(F* count, F* blocklength, F* displs, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_indexed_block(*count, *blocklength, displs, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_create_hindexed_block_(F* count, F* blocklength, MPI_Aint* displs, F* old, F* newtype,
                                                   F* ierr) {
  *ierr = MPI_Type_create_hindexed_block(*count, *blocklength, displs, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_create_darray_(F* size, F* rank, F* ndims, F* gsizes, F* distribs, F* dargs, F* psizes,
                                           F* order, F* old, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_darray(*size, *rank, *ndims, gsizes, distribs, dargs, psizes, *order, *old, newtype);
}
FTMPI_FORTRAN void mpi_type_get_true_extent_(F* type, MPI_Aint* lb, MPI_Aint* extent, F* ierr) {
  *ierr = MPI_Type_get_true_extent(*type, lb, extent);
}
FTMPI_FORTRAN void mpi_type_size_x_(F* type, MPI_Count* size, F* ierr) { *ierr = MPI_Type_size_x(*type, size); }
FTMPI_FORTRAN void mpi_type_get_extent_x_(F* type, MPI_Count* lb, MPI_Count* extent, F* ierr) {
  *ierr = MPI_Type_get_extent_x(*type, lb, extent);
}
FTMPI_FORTRAN void mpi_type_get_true_extent_x_(F* type, MPI_Count* lb, MPI_Count* extent, F* ierr) {
  *ierr = MPI_Type_get_true_extent_x(*type, lb, extent);
}
FTMPI_FORTRAN void mpi_type_set_name_(F* type, const char* name, F* ierr, std::size_t length) {
  *ierr = MPI_Type_set_name(*type, text(name, length).c_str());
}
FTMPI_FORTRAN void mpi_type_get_name_(F* type, char* name, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_OBJECT_NAME];
  *ierr = MPI_Type_get_name(*type, c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(name, length, c, *resultlen);
}
FTMPI_FORTRAN void mpi_type_get_envelope_(F* type, F* num_integers, F* num_addresses, F* num_datatypes, F* combiner,
                                          F* ierr) {
  *ierr = MPI_Type_get_envelope(*type, num_integers, num_addresses, num_datatypes, combiner);
}
FTMPI_FORTRAN void mpi_type_get_contents_(F* type, F* max_integers, F* max_addresses, F* max_datatypes, F* integers,
                                          MPI_Aint* addresses, F* datatypes, F* ierr) {
  *ierr = MPI_Type_get_contents(*type, *max_integers, *max_addresses, *max_datatypes, integers, addresses, datatypes);
}
// Fortran's kinds as types (MPI-3.1 section 17.1.9).
FTMPI_FORTRAN void mpi_type_match_size_(F* typeclass, F* size, F* datatype, F* ierr) {
  *ierr = MPI_Type_match_size(*typeclass, *size, datatype);
}
FTMPI_FORTRAN void mpi_type_create_f90_integer_(F* r, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_f90_integer(*r, newtype);
}
FTMPI_FORTRAN void mpi_type_create_f90_real_(F* p, F* r, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_f90_real(*p, *r, newtype);
}
FTMPI_FORTRAN void mpi_type_create_f90_complex_(F* p, F* r, F* newtype, F* ierr) {
  *ierr = MPI_Type_create_f90_complex(*p, *r, newtype);
}
FTMPI_FORTRAN void mpi_get_elements_x_(F* status, F* type, MPI_Count* count, F* ierr) {
  const MPI_Status c = status_in(status);
  *ierr = MPI_Get_elements_x(&c, *type, count);
}
// The status is the program's, read and written back.
FTMPI_FORTRAN void mpi_status_set_elements_(F* status, F* type, F* count, F* ierr) {
  MPI_Status c = status_in(status);
  *ierr = MPI_Status_set_elements(&c, *type, *count);
  if (*ierr == MPI_SUCCESS) std::memcpy(status, &c, sizeof c);
}
FTMPI_FORTRAN void mpi_status_set_elements_x_(F* status, F* type, MPI_Count* count, F* ierr) {
  MPI_Status c = status_in(status);
  *ierr = MPI_Status_set_elements_x(&c, *type, *count);
  if (*ierr == MPI_SUCCESS) std::memcpy(status, &c, sizeof c);
}
FTMPI_FORTRAN void mpi_status_set_cancelled_(F* status, F* flag, F* ierr) {
  MPI_Status c = status_in(status);
  *ierr = MPI_Status_set_cancelled(&c, *flag != 0);
  if (*ierr == MPI_SUCCESS) std::memcpy(status, &c, sizeof c);
}

// ---- more collectives -------------------------------------------------------------------------------
// Counts, displacements and datatype arrays of a nonblocking or persistent call are the program's
// arrays, which must stay in place until it completes (as in C).

FTMPI_FORTRAN void mpi_iscan_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Iscan(buffer(send), buffer(recv), *count, *type, *op, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_iexscan_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Iexscan(buffer(send), buffer(recv), *count, *type, *op, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_igatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype, F* root,
                                 F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Igatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *root, *comm,
                           &c_request));
}
FTMPI_FORTRAN void mpi_iscatterv_(void* send, F* scounts, F* displs, F* stype, void* recv, F* rcount, F* rtype, F* root,
                                  F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Iscatterv(buffer(send), scounts, displs, *stype, buffer(recv), *rcount, *rtype, *root, *comm,
                            &c_request));
}
FTMPI_FORTRAN void mpi_iallgatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype,
                                    F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Iallgatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_ialltoallv_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts, F* rdispls,
                                   F* rtype, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ialltoallv(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls, *rtype, *comm,
                             &c_request));
}
FTMPI_FORTRAN void mpi_ialltoallw_(void* send, F* scounts, F* sdispls, F* stypes, void* recv, F* rcounts, F* rdispls,
                                   F* rtypes, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ialltoallw(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls, rtypes, *comm,
                             &c_request));
}
FTMPI_FORTRAN void mpi_ireduce_scatter_(void* send, void* recv, F* counts, F* type, F* op, F* comm, F* request,
                                        F* ierr) {
  REQUEST_OUT(MPI_Ireduce_scatter(buffer(send), buffer(recv), counts, *type, *op, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_ireduce_scatter_block_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* request,
                                              F* ierr) {
  REQUEST_OUT(MPI_Ireduce_scatter_block(buffer(send), buffer(recv), *count, *type, *op, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_reduce_local_(void* in, void* inout, F* count, F* type, F* op, F* ierr) {
  *ierr = MPI_Reduce_local(buffer(in), buffer(inout), *count, *type, *op);
}
FTMPI_FORTRAN void mpi_op_commutative_(F* op, F* commute, F* ierr) { *ierr = MPI_Op_commutative(*op, commute); }
// MPI-4's persistent forms of the other collectives.
FTMPI_FORTRAN void mpi_scan_init_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* info, F* request,
                                  F* ierr) {
  REQUEST_OUT(MPI_Scan_init(buffer(send), buffer(recv), *count, *type, *op, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_exscan_init_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* info, F* request,
                                    F* ierr) {
  REQUEST_OUT(MPI_Exscan_init(buffer(send), buffer(recv), *count, *type, *op, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_gather_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root, F* comm,
                                    F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Gather_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm, *info,
                              &c_request));
}
FTMPI_FORTRAN void mpi_gatherv_init_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype,
                                     F* root, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Gatherv_init(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *root, *comm,
                               *info, &c_request));
}
FTMPI_FORTRAN void mpi_scatter_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* root,
                                     F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Scatter_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *root, *comm, *info,
                               &c_request));
}
FTMPI_FORTRAN void mpi_scatterv_init_(void* send, F* scounts, F* displs, F* stype, void* recv, F* rcount, F* rtype,
                                      F* root, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Scatterv_init(buffer(send), scounts, displs, *stype, buffer(recv), *rcount, *rtype, *root, *comm,
                                *info, &c_request));
}
FTMPI_FORTRAN void mpi_allgather_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                       F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Allgather_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, *info,
                                 &c_request));
}
FTMPI_FORTRAN void mpi_allgatherv_init_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs, F* rtype,
                                        F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Allgatherv_init(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm, *info,
                                  &c_request));
}
FTMPI_FORTRAN void mpi_alltoall_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                      F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Alltoall_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, *info,
                                &c_request));
}
FTMPI_FORTRAN void mpi_alltoallv_init_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts,
                                       F* rdispls, F* rtype, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Alltoallv_init(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls, *rtype, *comm,
                                 *info, &c_request));
}
FTMPI_FORTRAN void mpi_alltoallw_init_(void* send, F* scounts, F* sdispls, F* stypes, void* recv, F* rcounts,
                                       F* rdispls, F* rtypes, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Alltoallw_init(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls, rtypes, *comm,
                                 *info, &c_request));
}
FTMPI_FORTRAN void mpi_reduce_scatter_init_(void* send, void* recv, F* counts, F* type, F* op, F* comm, F* info,
                                            F* request, F* ierr) {
  REQUEST_OUT(MPI_Reduce_scatter_init(buffer(send), buffer(recv), counts, *type, *op, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_reduce_scatter_block_init_(void* send, void* recv, F* count, F* type, F* op, F* comm, F* info,
                                                  F* request, F* ierr) {
  REQUEST_OUT(MPI_Reduce_scatter_block_init(buffer(send), buffer(recv), *count, *type, *op, *comm, *info, &c_request));
}

// ---- more topologies and the neighborhood collectives -----------------------------------------------

FTMPI_FORTRAN void mpi_topo_test_(F* comm, F* status, F* ierr) { *ierr = MPI_Topo_test(*comm, status); }
FTMPI_FORTRAN void mpi_graph_create_(F* comm, F* nnodes, F* index, F* edges, F* reorder, F* newcomm, F* ierr) {
  *ierr = MPI_Graph_create(*comm, *nnodes, index, edges, *reorder != 0, newcomm);
}
FTMPI_FORTRAN void mpi_graph_map_(F* comm, F* nnodes, F* index, F* edges, F* newrank, F* ierr) {
  *ierr = MPI_Graph_map(*comm, *nnodes, index, edges, newrank);
}
FTMPI_FORTRAN void mpi_graphdims_get_(F* comm, F* nnodes, F* nedges, F* ierr) {
  *ierr = MPI_Graphdims_get(*comm, nnodes, nedges);
}
FTMPI_FORTRAN void mpi_graph_get_(F* comm, F* maxindex, F* maxedges, F* index, F* edges, F* ierr) {
  *ierr = MPI_Graph_get(*comm, *maxindex, *maxedges, index, edges);
}
FTMPI_FORTRAN void mpi_graph_neighbors_count_(F* comm, F* rank, F* nneighbors, F* ierr) {
  *ierr = MPI_Graph_neighbors_count(*comm, *rank, nneighbors);
}
FTMPI_FORTRAN void mpi_graph_neighbors_(F* comm, F* rank, F* maxneighbors, F* neighbors, F* ierr) {
  *ierr = MPI_Graph_neighbors(*comm, *rank, *maxneighbors, neighbors);
}
FTMPI_FORTRAN void mpi_dist_graph_create_(F* comm, F* n, F* sources, F* degrees, F* destinations, F* weights_in,
                                          F* info, F* reorder, F* newcomm, F* ierr) {
  *ierr = MPI_Dist_graph_create(*comm, *n, sources, degrees, destinations, weights(weights_in), *info, *reorder != 0,
                                newcomm);
}
FTMPI_FORTRAN void mpi_dist_graph_create_adjacent_(F* comm, F* indegree, F* sources, F* sourceweights, F* outdegree,
                                                   F* destinations, F* destweights, F* info, F* reorder, F* newcomm,
                                                   F* ierr) {
  *ierr = MPI_Dist_graph_create_adjacent(*comm, *indegree, sources, weights(sourceweights), *outdegree, destinations,
                                         weights(destweights), *info, *reorder != 0, newcomm);
}
FTMPI_FORTRAN void mpi_dist_graph_neighbors_count_(F* comm, F* indegree, F* outdegree, F* weighted, F* ierr) {
  *ierr = MPI_Dist_graph_neighbors_count(*comm, indegree, outdegree, weighted);
}
FTMPI_FORTRAN void mpi_dist_graph_neighbors_(F* comm, F* maxindegree, F* sources, F* sourceweights, F* maxoutdegree,
                                             F* destinations, F* destweights, F* ierr) {
  *ierr = MPI_Dist_graph_neighbors(*comm, *maxindegree, sources, weights(sourceweights), *maxoutdegree, destinations,
                                   weights(destweights));
}
FTMPI_FORTRAN void mpi_neighbor_allgather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                           F* ierr) {
  *ierr = MPI_Neighbor_allgather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_ineighbor_allgather_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                            F* request, F* ierr) {
  REQUEST_OUT(MPI_Ineighbor_allgather(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_allgatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs,
                                            F* rtype, F* comm, F* ierr) {
  *ierr = MPI_Neighbor_allgatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_ineighbor_allgatherv_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs,
                                             F* rtype, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ineighbor_allgatherv(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm,
                                       &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_alltoall_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                          F* ierr) {
  *ierr = MPI_Neighbor_alltoall(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_ineighbor_alltoall_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype, F* comm,
                                           F* request, F* ierr) {
  REQUEST_OUT(MPI_Ineighbor_alltoall(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_alltoallv_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts,
                                           F* rdispls, F* rtype, F* comm, F* ierr) {
  *ierr = MPI_Neighbor_alltoallv(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls, *rtype, *comm);
}
FTMPI_FORTRAN void mpi_ineighbor_alltoallv_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts,
                                            F* rdispls, F* rtype, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ineighbor_alltoallv(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls, *rtype,
                                      *comm, &c_request));
}
// The displacements of the w forms are INTEGER(KIND=MPI_ADDRESS_KIND), as in C.
FTMPI_FORTRAN void mpi_neighbor_alltoallw_(void* send, F* scounts, MPI_Aint* sdispls, F* stypes, void* recv,
                                           F* rcounts, MPI_Aint* rdispls, F* rtypes, F* comm, F* ierr) {
  *ierr = MPI_Neighbor_alltoallw(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls, rtypes, *comm);
}
FTMPI_FORTRAN void mpi_ineighbor_alltoallw_(void* send, F* scounts, MPI_Aint* sdispls, F* stypes, void* recv,
                                            F* rcounts, MPI_Aint* rdispls, F* rtypes, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ineighbor_alltoallw(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls, rtypes,
                                      *comm, &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_allgather_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype,
                                                F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Neighbor_allgather_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, *info,
                                          &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_allgatherv_init_(void* send, F* scount, F* stype, void* recv, F* rcounts, F* displs,
                                                 F* rtype, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Neighbor_allgatherv_init(buffer(send), *scount, *stype, buffer(recv), rcounts, displs, *rtype, *comm,
                                           *info, &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_alltoall_init_(void* send, F* scount, F* stype, void* recv, F* rcount, F* rtype,
                                               F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Neighbor_alltoall_init(buffer(send), *scount, *stype, buffer(recv), *rcount, *rtype, *comm, *info,
                                         &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_alltoallv_init_(void* send, F* scounts, F* sdispls, F* stype, void* recv, F* rcounts,
                                                F* rdispls, F* rtype, F* comm, F* info, F* request, F* ierr) {
  REQUEST_OUT(MPI_Neighbor_alltoallv_init(buffer(send), scounts, sdispls, *stype, buffer(recv), rcounts, rdispls,
                                          *rtype, *comm, *info, &c_request));
}
FTMPI_FORTRAN void mpi_neighbor_alltoallw_init_(void* send, F* scounts, MPI_Aint* sdispls, F* stypes, void* recv,
                                                F* rcounts, MPI_Aint* rdispls, F* rtypes, F* comm, F* info, F* request,
                                                F* ierr) {
  REQUEST_OUT(MPI_Neighbor_alltoallw_init(buffer(send), scounts, sdispls, stypes, buffer(recv), rcounts, rdispls,
                                          rtypes, *comm, *info, &c_request));
}

// ---- the rest: persistent sends, request status, generalized requests, MPI_PCONTROL -----------------

FTMPI_FORTRAN void mpi_ssend_init_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Ssend_init(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_rsend_init_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Rsend_init(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
FTMPI_FORTRAN void mpi_bsend_init_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* request, F* ierr) {
  REQUEST_OUT(MPI_Bsend_init(buffer(buf), *count, *type, *dest, *tag, *comm, &c_request));
}
// The request stays (it is not freed, even when complete).
FTMPI_FORTRAN void mpi_request_get_status_(F* request, F* flag, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_Request_get_status(to_c(*request), flag, s.get());
}
// MPI_PCONTROL(LEVEL) has no IERROR in Fortran (MPI-3.1 section 14.2.4).
FTMPI_FORTRAN void mpi_pcontrol_(F* level) { MPI_Pcontrol(*level); }
// MPI-3.1 section 17.1.7: does nothing, but the compiler must assume it reads and writes BUF, so a
// register copy of BUF is not kept across it (after MPI_Wait on a nonblocking receive, for example).
FTMPI_FORTRAN void mpi_f_sync_reg_(void* /*buf*/) {}
// MPI-4.0 section 19.3.5: between the INTEGER status of `use mpi` and TYPE(MPI_Status) (the same six
// INTEGERs here); MPI_STATUS_IGNORE on either side is MPI_ERR_ARG, as in C.
FTMPI_FORTRAN void mpi_status_f2f08_(F* f_status, F* f08_status, F* ierr) {
  *ierr = MPI_Status_f2f08(f_status, reinterpret_cast<MPI_F08_status*>(f08_status));
}
FTMPI_FORTRAN void mpi_status_f082f_(F* f08_status, F* f_status, F* ierr) {
  *ierr = MPI_Status_f082f(reinterpret_cast<const MPI_F08_status*>(f08_status), f_status);
}

namespace {

using QueryFn = void(MPI_Aint* extra_state, F* status, F* ierr);
using FreeFn = void(MPI_Aint* extra_state, F* ierr);
using CancelFn = void(MPI_Aint* extra_state, F* complete, F* ierr);

// A generalized request's Fortran side: the C extra_state, freed after the program's free function.
// The callbacks get the program's own EXTRA_STATE variable (as MPICH passes it, and its greqf test
// expects: a free function that changes it changes the caller's), which must live until then.
struct FortranGrequest {
  QueryFn* query;
  FreeFn* free;
  CancelFn* cancel;
  MPI_Aint* extra_state;
};

int grequest_query(void* extra_state, MPI_Status* status) {
  auto* g = static_cast<FortranGrequest*>(extra_state);
  MPI_Status scratch{};
  MPI_Status* c = status == MPI_STATUS_IGNORE || status == nullptr ? &scratch : status;
  F f[sizeof(MPI_Status) / sizeof(F)];
  std::memcpy(f, c, sizeof f);
  F ierr = MPI_SUCCESS;
  g->query(g->extra_state, f, &ierr);
  std::memcpy(c, f, sizeof f);
  return ierr;
}
int grequest_free(void* extra_state) {
  auto* g = static_cast<FortranGrequest*>(extra_state);
  F ierr = MPI_SUCCESS;
  g->free(g->extra_state, &ierr);
  delete g;
  return ierr;
}
int grequest_cancel(void* extra_state, int complete) {
  auto* g = static_cast<FortranGrequest*>(extra_state);
  F done = complete != 0 ? 1 : 0;
  F ierr = MPI_SUCCESS;
  g->cancel(g->extra_state, &done, &ierr);
  return ierr;
}

}  // namespace

FTMPI_FORTRAN void mpi_grequest_start_(QueryFn* query, FreeFn* free, CancelFn* cancel, MPI_Aint* extra_state,
                                       F* request, F* ierr) {
  auto* g = new FortranGrequest{query, free, cancel, extra_state};
  MPI_Request c_request = nullptr;
  *ierr = MPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, &c_request);
  if (*ierr != MPI_SUCCESS) delete g;
  *request = to_fortran(c_request);
}
FTMPI_FORTRAN void mpi_grequest_complete_(F* request, F* ierr) { *ierr = MPI_Grequest_complete(to_c(*request)); }

// ---- groups: ranges ---------------------------------------------------------------------------------

// RANGES(3, N) in Fortran has C's int ranges[N][3] layout.
FTMPI_FORTRAN void mpi_group_range_incl_(F* group, F* n, F (*ranges)[3], F* newgroup, F* ierr) {
  *ierr = MPI_Group_range_incl(*group, *n, ranges, newgroup);
}
FTMPI_FORTRAN void mpi_group_range_excl_(F* group, F* n, F (*ranges)[3], F* newgroup, F* ierr) {
  *ierr = MPI_Group_range_excl(*group, *n, ranges, newgroup);
}

// ---- MPI-IO (api_file.cpp) ---------------------------------------------------------------------------

FTMPI_FORTRAN void mpi_file_open_(F* comm, const char* filename, F* amode, F* info, F* fh, F* ierr,
                                  std::size_t filename_length) {
  *ierr = MPI_File_open(*comm, trimmed(filename, filename_length).c_str(), *amode, *info, fh);
}
FTMPI_FORTRAN void mpi_file_close_(F* fh, F* ierr) { *ierr = MPI_File_close(fh); }
FTMPI_FORTRAN void mpi_file_delete_(const char* filename, F* info, F* ierr, std::size_t filename_length) {
  *ierr = MPI_File_delete(trimmed(filename, filename_length).c_str(), *info);
}
FTMPI_FORTRAN void mpi_file_set_size_(F* fh, MPI_Offset* size, F* ierr) { *ierr = MPI_File_set_size(*fh, *size); }
FTMPI_FORTRAN void mpi_file_preallocate_(F* fh, MPI_Offset* size, F* ierr) {
  *ierr = MPI_File_preallocate(*fh, *size);
}
FTMPI_FORTRAN void mpi_file_get_size_(F* fh, MPI_Offset* size, F* ierr) { *ierr = MPI_File_get_size(*fh, size); }
FTMPI_FORTRAN void mpi_file_get_group_(F* fh, F* group, F* ierr) { *ierr = MPI_File_get_group(*fh, group); }
FTMPI_FORTRAN void mpi_file_get_amode_(F* fh, F* amode, F* ierr) { *ierr = MPI_File_get_amode(*fh, amode); }
FTMPI_FORTRAN void mpi_file_set_info_(F* fh, F* info, F* ierr) { *ierr = MPI_File_set_info(*fh, *info); }
FTMPI_FORTRAN void mpi_file_get_info_(F* fh, F* info_used, F* ierr) { *ierr = MPI_File_get_info(*fh, info_used); }
FTMPI_FORTRAN void mpi_file_set_view_(F* fh, MPI_Offset* disp, F* etype, F* filetype, const char* datarep, F* info,
                                      F* ierr, std::size_t datarep_length) {
  *ierr = MPI_File_set_view(*fh, *disp, *etype, *filetype, trimmed(datarep, datarep_length).c_str(), *info);
}
FTMPI_FORTRAN void mpi_file_get_view_(F* fh, MPI_Offset* disp, F* etype, F* filetype, char* datarep, F* ierr,
                                      std::size_t datarep_length) {
  char c[MPI_MAX_DATAREP_STRING] = {};
  *ierr = MPI_File_get_view(*fh, disp, etype, filetype, c);
  if (*ierr == MPI_SUCCESS) fill(datarep, datarep_length, c, static_cast<int>(std::strlen(c)));
}
FTMPI_FORTRAN void mpi_file_seek_(F* fh, MPI_Offset* offset, F* whence, F* ierr) {
  *ierr = MPI_File_seek(*fh, *offset, *whence);
}
FTMPI_FORTRAN void mpi_file_get_position_(F* fh, MPI_Offset* offset, F* ierr) {
  *ierr = MPI_File_get_position(*fh, offset);
}
FTMPI_FORTRAN void mpi_file_get_byte_offset_(F* fh, MPI_Offset* offset, MPI_Offset* disp, F* ierr) {
  *ierr = MPI_File_get_byte_offset(*fh, *offset, disp);
}
FTMPI_FORTRAN void mpi_file_seek_shared_(F* fh, MPI_Offset* offset, F* whence, F* ierr) {
  *ierr = MPI_File_seek_shared(*fh, *offset, *whence);
}
FTMPI_FORTRAN void mpi_file_get_position_shared_(F* fh, MPI_Offset* offset, F* ierr) {
  *ierr = MPI_File_get_position_shared(*fh, offset);
}
FTMPI_FORTRAN void mpi_file_get_type_extent_(F* fh, F* type, MPI_Aint* extent, F* ierr) {
  *ierr = MPI_File_get_type_extent(*fh, *type, extent);
}
FTMPI_FORTRAN void mpi_file_set_atomicity_(F* fh, F* flag, F* ierr) { *ierr = MPI_File_set_atomicity(*fh, *flag); }
FTMPI_FORTRAN void mpi_file_get_atomicity_(F* fh, F* flag, F* ierr) { *ierr = MPI_File_get_atomicity(*fh, flag); }
FTMPI_FORTRAN void mpi_file_sync_(F* fh, F* ierr) { *ierr = MPI_File_sync(*fh); }
// A Fortran handler gets the file and the code by reference, as the C one does.
FTMPI_FORTRAN void mpi_file_create_errhandler_(MPI_File_errhandler_function* function, F* handler, F* ierr) {
  *ierr = MPI_File_create_errhandler(function, handler);
}
FTMPI_FORTRAN void mpi_file_set_errhandler_(F* fh, F* handler, F* ierr) {
  *ierr = MPI_File_set_errhandler(*fh, *handler);
}
FTMPI_FORTRAN void mpi_file_get_errhandler_(F* fh, F* handler, F* ierr) {
  *ierr = MPI_File_get_errhandler(*fh, handler);
}
FTMPI_FORTRAN void mpi_file_call_errhandler_(F* fh, F* code, F* ierr) {
  *ierr = MPI_File_call_errhandler(*fh, *code);
}

// Data access: blocking (a status), nonblocking (a request), split collectives.
FTMPI_FORTRAN void mpi_file_read_at_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_at(*fh, *offset, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_read_at_all_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_at_all(*fh, *offset, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_at_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_at(*fh, *offset, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_at_all_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_at_all(*fh, *offset, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_iread_at_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iread_at(*fh, *offset, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iread_at_all_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iread_at_all(*fh, *offset, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iwrite_at_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iwrite_at(*fh, *offset, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iwrite_at_all_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iwrite_at_all(*fh, *offset, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_read_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_read_all_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_all(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_all_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_all(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_read_shared_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_shared(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_shared_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_shared(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_read_ordered_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_ordered(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_write_ordered_(F* fh, void* buf, F* count, F* type, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_ordered(*fh, buffer(buf), *count, *type, s.get());
}
FTMPI_FORTRAN void mpi_file_iread_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iread(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iread_all_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iread_all(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iwrite_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iwrite(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iwrite_all_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iwrite_all(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iread_shared_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iread_shared(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_iwrite_shared_(F* fh, void* buf, F* count, F* type, F* request, F* ierr) {
  REQUEST_OUT(MPI_File_iwrite_shared(*fh, buffer(buf), *count, *type, &c_request));
}
FTMPI_FORTRAN void mpi_file_read_at_all_begin_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_read_at_all_begin(*fh, *offset, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_write_at_all_begin_(F* fh, MPI_Offset* offset, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_write_at_all_begin(*fh, *offset, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_read_all_begin_(F* fh, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_read_all_begin(*fh, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_write_all_begin_(F* fh, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_write_all_begin(*fh, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_read_ordered_begin_(F* fh, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_read_ordered_begin(*fh, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_write_ordered_begin_(F* fh, void* buf, F* count, F* type, F* ierr) {
  *ierr = MPI_File_write_ordered_begin(*fh, buffer(buf), *count, *type);
}
FTMPI_FORTRAN void mpi_file_read_at_all_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_at_all_end(*fh, buffer(buf), s.get());
}
FTMPI_FORTRAN void mpi_file_write_at_all_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_at_all_end(*fh, buffer(buf), s.get());
}
FTMPI_FORTRAN void mpi_file_read_all_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_all_end(*fh, buffer(buf), s.get());
}
FTMPI_FORTRAN void mpi_file_write_all_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_all_end(*fh, buffer(buf), s.get());
}
FTMPI_FORTRAN void mpi_file_read_ordered_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_read_ordered_end(*fh, buffer(buf), s.get());
}
FTMPI_FORTRAN void mpi_file_write_ordered_end_(F* fh, void* buf, F* status, F* ierr) {
  StatusOut s(status);
  *ierr = MPI_File_write_ordered_end(*fh, buffer(buf), s.get());
}

// ---- one-sided communication (api_rma.cpp; window attributes in attributes.cpp) ----------------------
// Sizes and target displacements are INTEGER(KIND=MPI_ADDRESS_KIND). The memory MPI_WIN_ALLOCATE and
// _ALLOCATE_SHARED give, and MPI_WIN_SHARED_QUERY finds, comes back as its address in an
// INTEGER(KIND=MPI_ADDRESS_KIND) BASEPTR (MPI-3.1 section 11.2.2); `use mpi` also takes a TYPE(C_PTR)
// there (the _cptr names below), which gfortran passes as the same eight bytes by reference. So does
// MPI_ALLOC_MEM.

// MPI_ALLOC_MEM's memory (for windows, as MPI-3.1 section 11.2.1 advises) comes back as the windows'
// does (section 8.2); MPI_FREE_MEM takes the memory itself.
FTMPI_FORTRAN void mpi_alloc_mem_(MPI_Aint* size, F* info, MPI_Aint* baseptr, F* ierr) {
  void* base = nullptr;
  *ierr = MPI_Alloc_mem(*size, *info, &base);
  if (*ierr == MPI_SUCCESS) *baseptr = as_aint(base);
}
FTMPI_FORTRAN void mpi_free_mem_(void* base, F* ierr) { *ierr = MPI_Free_mem(base); }

FTMPI_FORTRAN void mpi_win_create_(void* base, MPI_Aint* size, F* disp_unit, F* info, F* comm, F* win, F* ierr) {
  *ierr = MPI_Win_create(buffer(base), *size, *disp_unit, *info, *comm, win);
}
FTMPI_FORTRAN void mpi_win_allocate_(MPI_Aint* size, F* disp_unit, F* info, F* comm, MPI_Aint* baseptr, F* win,
                                     F* ierr) {
  void* base = nullptr;
  *ierr = MPI_Win_allocate(*size, *disp_unit, *info, *comm, &base, win);
  if (*ierr == MPI_SUCCESS) *baseptr = as_aint(base);
}
FTMPI_FORTRAN void mpi_win_allocate_shared_(MPI_Aint* size, F* disp_unit, F* info, F* comm, MPI_Aint* baseptr, F* win,
                                            F* ierr) {
  void* base = nullptr;
  *ierr = MPI_Win_allocate_shared(*size, *disp_unit, *info, *comm, &base, win);
  if (*ierr == MPI_SUCCESS) *baseptr = as_aint(base);
}
FTMPI_FORTRAN void mpi_win_shared_query_(F* win, F* rank, MPI_Aint* size, F* disp_unit, MPI_Aint* baseptr, F* ierr) {
  void* base = nullptr;
  *ierr = MPI_Win_shared_query(*win, *rank, size, disp_unit, &base);
  if (*ierr == MPI_SUCCESS) *baseptr = as_aint(base);
}
// The TYPE(C_PTR) specifics of `use mpi`'s generics (fortran/mpi.f90). Not named like the procedures
// above on purpose: they are not calls of their own, and mpi_f08's MPI_Win_allocate takes a C_PTR itself.
FTMPI_FORTRAN __attribute__((alias("mpi_alloc_mem_"))) void mpi_alloc_mem_cptr_(MPI_Aint*, F*, MPI_Aint*, F*);
FTMPI_FORTRAN __attribute__((alias("mpi_win_allocate_"))) void mpi_win_allocate_cptr_(
    MPI_Aint*, F*, F*, F*, MPI_Aint*, F*, F*);
FTMPI_FORTRAN __attribute__((alias("mpi_win_allocate_shared_"))) void mpi_win_allocate_shared_cptr_(
    MPI_Aint*, F*, F*, F*, MPI_Aint*, F*, F*);
FTMPI_FORTRAN __attribute__((alias("mpi_win_shared_query_"))) void mpi_win_shared_query_cptr_(
    F*, F*, MPI_Aint*, F*, MPI_Aint*, F*);
FTMPI_FORTRAN void mpi_win_create_dynamic_(F* info, F* comm, F* win, F* ierr) {
  *ierr = MPI_Win_create_dynamic(*info, *comm, win);
}
FTMPI_FORTRAN void mpi_win_attach_(F* win, void* base, MPI_Aint* size, F* ierr) {
  *ierr = MPI_Win_attach(*win, buffer(base), *size);
}
FTMPI_FORTRAN void mpi_win_detach_(F* win, void* base, F* ierr) { *ierr = MPI_Win_detach(*win, buffer(base)); }
FTMPI_FORTRAN void mpi_win_free_(F* win, F* ierr) { *ierr = MPI_Win_free(win); }
FTMPI_FORTRAN void mpi_win_get_group_(F* win, F* group, F* ierr) { *ierr = MPI_Win_get_group(*win, group); }
FTMPI_FORTRAN void mpi_win_set_name_(F* win, const char* name, F* ierr, std::size_t length) {
  *ierr = MPI_Win_set_name(*win, text(name, length).c_str());
}
FTMPI_FORTRAN void mpi_win_get_name_(F* win, char* name, F* resultlen, F* ierr, std::size_t length) {
  char c[MPI_MAX_OBJECT_NAME];
  *ierr = MPI_Win_get_name(*win, c, resultlen);
  if (*ierr == MPI_SUCCESS) fill(name, length, c, *resultlen);
}
FTMPI_FORTRAN void mpi_win_set_info_(F* win, F* info, F* ierr) { *ierr = MPI_Win_set_info(*win, *info); }
FTMPI_FORTRAN void mpi_win_get_info_(F* win, F* info_used, F* ierr) { *ierr = MPI_Win_get_info(*win, info_used); }

// SUBROUTINE HANDLER(WIN, ERROR_CODE) takes both by reference, as the C handler does: passed as it is.
FTMPI_FORTRAN void mpi_win_create_errhandler_(MPI_Win_errhandler_function* function, F* handler, F* ierr) {
  *ierr = MPI_Win_create_errhandler(function, handler);
}
FTMPI_FORTRAN void mpi_win_set_errhandler_(F* win, F* handler, F* ierr) {
  *ierr = MPI_Win_set_errhandler(*win, *handler);
}
FTMPI_FORTRAN void mpi_win_get_errhandler_(F* win, F* handler, F* ierr) {
  *ierr = MPI_Win_get_errhandler(*win, handler);
}
FTMPI_FORTRAN void mpi_win_call_errhandler_(F* win, F* code, F* ierr) { *ierr = MPI_Win_call_errhandler(*win, *code); }

// Window keyvals: the communicators' trampolines (a window handle is an int too).
FTMPI_FORTRAN void mpi_win_create_keyval_(CopyFn* copy, DeleteFn* remove, F* keyval, MPI_Aint* extra_state, F* ierr) {
  const KeyvalCallbacks c = keyval_callbacks(copy, remove, *extra_state);
  *ierr = MPI_Win_create_keyval(c.copy, c.remove, keyval, c.extra_state);
}
FTMPI_FORTRAN void mpi_win_free_keyval_(F* keyval, F* ierr) { *ierr = MPI_Win_free_keyval(keyval); }
FTMPI_FORTRAN void mpi_win_set_attr_(F* win, F* keyval, MPI_Aint* value, F* ierr) {
  *ierr = MPI_Win_set_attr(*win, *keyval, as_value(*value));
}
// The predefined attributes by value (MPI-3.1 section 11.2.6): MPI_WIN_BASE the address, MPI_WIN_SIZE
// the size, the others an int; C gives pointers to the last four.
FTMPI_FORTRAN void mpi_win_get_attr_(F* win, F* keyval, MPI_Aint* value, F* flag, F* ierr) {
  void* c = nullptr;
  *ierr = MPI_Win_get_attr(*win, *keyval, &c, flag);
  if (*ierr != MPI_SUCCESS || *flag == 0) return;
  switch (*keyval) {
    case MPI_WIN_SIZE: *value = *static_cast<MPI_Aint*>(c); return;
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL: *value = *static_cast<int*>(c); return;
    default: *value = as_aint(c);  // MPI_WIN_BASE and the program's own
  }
}
FTMPI_FORTRAN void mpi_win_delete_attr_(F* win, F* keyval, F* ierr) { *ierr = MPI_Win_delete_attr(*win, *keyval); }

// Operations.
FTMPI_FORTRAN void mpi_put_(void* origin, F* origin_count, F* origin_type, F* target_rank, MPI_Aint* target_disp,
                            F* target_count, F* target_type, F* win, F* ierr) {
  *ierr = MPI_Put(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count, *target_type,
                  *win);
}
FTMPI_FORTRAN void mpi_get_(void* origin, F* origin_count, F* origin_type, F* target_rank, MPI_Aint* target_disp,
                            F* target_count, F* target_type, F* win, F* ierr) {
  *ierr = MPI_Get(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count, *target_type,
                  *win);
}
FTMPI_FORTRAN void mpi_accumulate_(void* origin, F* origin_count, F* origin_type, F* target_rank,
                                   MPI_Aint* target_disp, F* target_count, F* target_type, F* op, F* win, F* ierr) {
  *ierr = MPI_Accumulate(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                         *target_type, *op, *win);
}
FTMPI_FORTRAN void mpi_get_accumulate_(void* origin, F* origin_count, F* origin_type, void* result, F* result_count,
                                       F* result_type, F* target_rank, MPI_Aint* target_disp, F* target_count,
                                       F* target_type, F* op, F* win, F* ierr) {
  *ierr = MPI_Get_accumulate(buffer(origin), *origin_count, *origin_type, buffer(result), *result_count, *result_type,
                             *target_rank, *target_disp, *target_count, *target_type, *op, *win);
}
FTMPI_FORTRAN void mpi_fetch_and_op_(void* origin, void* result, F* type, F* target_rank, MPI_Aint* target_disp, F* op,
                                     F* win, F* ierr) {
  *ierr = MPI_Fetch_and_op(buffer(origin), buffer(result), *type, *target_rank, *target_disp, *op, *win);
}
FTMPI_FORTRAN void mpi_compare_and_swap_(void* origin, void* compare, void* result, F* type, F* target_rank,
                                         MPI_Aint* target_disp, F* win, F* ierr) {
  *ierr = MPI_Compare_and_swap(buffer(origin), buffer(compare), buffer(result), *type, *target_rank, *target_disp,
                               *win);
}
FTMPI_FORTRAN void mpi_rput_(void* origin, F* origin_count, F* origin_type, F* target_rank, MPI_Aint* target_disp,
                             F* target_count, F* target_type, F* win, F* request, F* ierr) {
  REQUEST_OUT(MPI_Rput(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                       *target_type, *win, &c_request));
}
FTMPI_FORTRAN void mpi_rget_(void* origin, F* origin_count, F* origin_type, F* target_rank, MPI_Aint* target_disp,
                             F* target_count, F* target_type, F* win, F* request, F* ierr) {
  REQUEST_OUT(MPI_Rget(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                       *target_type, *win, &c_request));
}
FTMPI_FORTRAN void mpi_raccumulate_(void* origin, F* origin_count, F* origin_type, F* target_rank,
                                    MPI_Aint* target_disp, F* target_count, F* target_type, F* op, F* win, F* request,
                                    F* ierr) {
  REQUEST_OUT(MPI_Raccumulate(buffer(origin), *origin_count, *origin_type, *target_rank, *target_disp, *target_count,
                              *target_type, *op, *win, &c_request));
}
FTMPI_FORTRAN void mpi_rget_accumulate_(void* origin, F* origin_count, F* origin_type, void* result, F* result_count,
                                        F* result_type, F* target_rank, MPI_Aint* target_disp, F* target_count,
                                        F* target_type, F* op, F* win, F* request, F* ierr) {
  REQUEST_OUT(MPI_Rget_accumulate(buffer(origin), *origin_count, *origin_type, buffer(result), *result_count,
                                  *result_type, *target_rank, *target_disp, *target_count, *target_type, *op, *win,
                                  &c_request));
}

// Synchronisation.
FTMPI_FORTRAN void mpi_win_fence_(F* assertion, F* win, F* ierr) { *ierr = MPI_Win_fence(*assertion, *win); }
FTMPI_FORTRAN void mpi_win_post_(F* group, F* assertion, F* win, F* ierr) {
  *ierr = MPI_Win_post(*group, *assertion, *win);
}
FTMPI_FORTRAN void mpi_win_start_(F* group, F* assertion, F* win, F* ierr) {
  *ierr = MPI_Win_start(*group, *assertion, *win);
}
FTMPI_FORTRAN void mpi_win_complete_(F* win, F* ierr) { *ierr = MPI_Win_complete(*win); }
FTMPI_FORTRAN void mpi_win_wait_(F* win, F* ierr) { *ierr = MPI_Win_wait(*win); }
FTMPI_FORTRAN void mpi_win_test_(F* win, F* flag, F* ierr) { *ierr = MPI_Win_test(*win, flag); }
FTMPI_FORTRAN void mpi_win_lock_(F* lock_type, F* rank, F* assertion, F* win, F* ierr) {
  *ierr = MPI_Win_lock(*lock_type, *rank, *assertion, *win);
}
FTMPI_FORTRAN void mpi_win_unlock_(F* rank, F* win, F* ierr) { *ierr = MPI_Win_unlock(*rank, *win); }
FTMPI_FORTRAN void mpi_win_lock_all_(F* assertion, F* win, F* ierr) { *ierr = MPI_Win_lock_all(*assertion, *win); }
FTMPI_FORTRAN void mpi_win_unlock_all_(F* win, F* ierr) { *ierr = MPI_Win_unlock_all(*win); }
FTMPI_FORTRAN void mpi_win_flush_(F* rank, F* win, F* ierr) { *ierr = MPI_Win_flush(*rank, *win); }
FTMPI_FORTRAN void mpi_win_flush_all_(F* win, F* ierr) { *ierr = MPI_Win_flush_all(*win); }
FTMPI_FORTRAN void mpi_win_flush_local_(F* rank, F* win, F* ierr) { *ierr = MPI_Win_flush_local(*rank, *win); }
FTMPI_FORTRAN void mpi_win_flush_local_all_(F* win, F* ierr) { *ierr = MPI_Win_flush_local_all(*win); }
FTMPI_FORTRAN void mpi_win_sync_(F* win, F* ierr) { *ierr = MPI_Win_sync(*win); }
