#include "mpi/errors.hpp"

#include <array>
#include <deque>
#include <string>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {
namespace {

struct ClassRow {
  int code;
  std::string_view name;
  std::string_view text;
};

// Indexed by class; checked below so that a row cannot silently go missing or move.
constexpr std::array<ClassRow, MPI_ERR_LASTCODE + 1> kClasses{{
    {MPI_SUCCESS, "MPI_SUCCESS", "no error"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer, or no room in the attached buffer"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype"},
    {MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag"},
    {MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator"},
    {MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group"},
    {MPI_ERR_OP, "MPI_ERR_OP", "invalid operation"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument"},
    {MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument of some other kind"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated on receive"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER", "known error not in this list"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal MPI (implementation) error"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request (handle)"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE", "error related to the amode passed to MPI_File_open"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "error in a user-supplied data conversion function"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation identifier already registered"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file operation could not be completed: file in use"},
    {MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle"},
    {MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "info key longer than MPI_MAX_INFO_KEY"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "info value longer than MPI_MAX_INFO_VAL"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "info key not defined"},
    {MPI_ERR_IO, "MPI_ERR_IO", "other I/O error"},
    {MPI_ERR_NAME, "MPI_ERR_NAME", "invalid service name"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "collective argument not identical on all processes"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "not enough space"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    {MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "read-only file or file system"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name passed to MPI_Unpublish_name"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "error in spawning processes"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window"},
    {MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid attribute key"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size argument"},
    {MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement argument"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assert argument"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "target memory is not part of the window"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "passed window has the wrong flavor for the called function"},
    {MPIX_ERR_PROC_FAILED, "MPIX_ERR_PROC_FAILED", "a process this operation needs is unreachable"},
    {MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "out of memory"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED", "the tools interface is not initialized"},
    {MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT", "the tools interface cannot be initialized"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "no variable or category has this index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "no item of the enumeration has this index"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "invalid tools interface handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "no more tools interface handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "no more performance variable sessions"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "invalid performance variable session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T_ERR_CVAR_SET_NOT_NOW", "the control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER", "the control variable can never be set"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_ERR_PVAR_NO_STARTSTOP", "the performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE", "the performance variable cannot be written or reset"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_ERR_PVAR_NO_ATOMIC", "the performance variable cannot be read and reset atomically"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "no variable or category has this name"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "invalid use of the tools interface"},
    {MPI_ERR_LASTCODE, "MPI_ERR_LASTCODE", "last error code"},
}};

constexpr bool rows_in_place() {
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    if (kClasses[i].code != static_cast<int>(i) || kClasses[i].name.empty() || kClasses[i].text.empty()) {
      return false;
    }
  }
  return true;
}
static_assert(rows_in_place(), "kClasses must list every class once, in order");

struct UserCode {
  int error_class;
  std::string text;
};
// Indexed by code - MPI_ERR_LASTCODE - 1. A deque: references stay put as codes are added.
std::deque<UserCode> user_codes;

// A created handler. `handles`: how many the program holds (MPI_Comm_get_errhandler gives out one more,
// MPI_Errhandler_free takes one back); communicators go on using it after the last is freed.
struct UserErrhandler {
  MPI_Comm_errhandler_function* function;
  int handles;
};
std::deque<UserErrhandler> user_errhandlers;  // handle index 2 and up (0 and 1 are the predefined ones)
constexpr int kPredefinedErrhandlers = 2;

UserErrhandler* find_user_errhandler(MPI_Errhandler handle) noexcept {
  const auto index = handle_index(handle, HandleKind::errhandler);
  if (!index || *index < kPredefinedErrhandlers || *index - kPredefinedErrhandlers >= user_errhandlers.size()) {
    return nullptr;
  }
  return &user_errhandlers[*index - kPredefinedErrhandlers];
}

}  // namespace

bool is_user_code(int code) noexcept {
  return code > MPI_ERR_LASTCODE && static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1) < user_codes.size();
}

int add_error_code(int error_class) {
  const int code = MPI_ERR_LASTCODE + 1 + static_cast<int>(user_codes.size());
  user_codes.push_back({error_class < 0 ? code : error_class, {}});
  return code;
}

int user_code_class(int code) noexcept { return user_codes[static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1)].error_class; }
std::string& user_code_string(int code) noexcept { return user_codes[static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1)].text; }
int last_used_code() noexcept { return MPI_ERR_LASTCODE + static_cast<int>(user_codes.size()); }

MPI_Errhandler add_errhandler(MPI_Comm_errhandler_function* function) {
  user_errhandlers.push_back({function, 1});
  return make_handle(HandleKind::errhandler, static_cast<std::uint32_t>(kPredefinedErrhandlers + user_errhandlers.size() - 1));
}

bool errhandler_live(MPI_Errhandler handle) noexcept {
  if (handle == MPI_ERRORS_ARE_FATAL || handle == MPI_ERRORS_RETURN) return true;
  const UserErrhandler* h = find_user_errhandler(handle);
  return h != nullptr && h->handles > 0;
}

bool call_created_errhandler(MPI_Errhandler handler, MPI_Comm comm, int code) {
  const UserErrhandler* h = find_user_errhandler(handler);
  if (h == nullptr) return false;
  h->function(&comm, &code);
  return true;
}

bool free_errhandler(MPI_Errhandler handle) noexcept {
  UserErrhandler* h = find_user_errhandler(handle);
  if (h == nullptr || h->handles == 0) return false;
  --h->handles;
  return true;
}

void hand_out_errhandler(MPI_Errhandler handle) noexcept {
  if (UserErrhandler* h = find_user_errhandler(handle)) ++h->handles;
}

bool is_error_class(int code) noexcept { return code >= MPI_SUCCESS && code <= MPI_ERR_LASTCODE; }
// Codes reach these from the program too (a generalized request's query function returns one), so any
// int is answered: an added code by what the program said of it, a number that is no code as such.
std::string_view error_class_name(int code) noexcept {
  if (is_error_class(code)) return kClasses[static_cast<std::size_t>(code)].name;
  return is_user_code(code) ? "an error code added by the program" : "MPI_ERR_UNKNOWN";
}
std::string_view error_class_text(int code) noexcept {
  if (is_error_class(code)) return kClasses[static_cast<std::size_t>(code)].text;
  if (!is_user_code(code)) return "not an error code of this MPI";
  const std::string& text = user_code_string(code);
  return text.empty() ? std::string_view("an error code added by the program, without a string") : text;
}
std::string code_and_text(int code) { return fmt::format("{}: {}", code, error_class_text(code)); }
int class_of_code(int code) noexcept {
  if (is_error_class(code)) return code;
  return is_user_code(code) ? user_code_class(code) : MPI_ERR_UNKNOWN;
}

// The one table from engine outcomes to MPI error classes. Frame-severity codes never leave the
// engine (it drops the frame and lets retransmission repair it), so seeing one here is an internal
// error; rail failures are repaired by failover, so one that reaches a call means the engine gave up.
int error_class_of(base::Errc code) noexcept {
  switch (code) {
    case base::Errc::ok: return MPI_SUCCESS;
    case base::Errc::truncated:
    case base::Errc::malformed:
    case base::Errc::bad_checksum:
    case base::Errc::wrong_job:
    case base::Errc::unsupported_version:
    case base::Errc::duplicate: return MPI_ERR_INTERN;
    case base::Errc::invalid_argument:
    case base::Errc::out_of_range:
    case base::Errc::not_found: return MPI_ERR_ARG;
    case base::Errc::would_block: return MPI_ERR_PENDING;
    case base::Errc::unsupported: return MPI_ERR_UNSUPPORTED_OPERATION;
    case base::Errc::resource_exhausted: return MPI_ERR_NO_MEM;
    case base::Errc::io_error:
    case base::Errc::rail_down: return MPI_ERR_OTHER;
    // A lost peer; also the launcher unreachable (a process every call of the job needs).
    case base::Errc::peer_unreachable: return MPIX_ERR_PROC_FAILED;
    case base::Errc::internal: return MPI_ERR_INTERN;
  }
  return MPI_ERR_INTERN;
}

}  // namespace ftmpi::mpi
