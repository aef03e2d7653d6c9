// The tools information interface (MPI-3.1 chapter 14), for performance tools and tuners.
//
// Control variables are ftmpi's parameters (docs/architecture.md, "Parameters"), in the catalogue's order:
// readable at any time, writable only before MPI_Init, because the engine reads them once, when it starts
// (MPI_T_ERR_CVAR_SET_NOT_NOW after). Performance variables are the engine's counters (engine/stats.hpp):
// read-only and continuous (counting from MPI_Init, never stopped); a counter reads as what happened
// since its handle was allocated, as MPI-3.1 section 14.3.7 says counters start at 0. Categories are the
// parameters' first name part (base, match, path, rte, coll, engine); the engine's holds the counters
// too. There are no enumerations. The calls return their codes (no error handler is ever called) and
// work before MPI_Init and after MPI_Finalize, as MPI requires; one mutex serialises them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engine/engine.hpp"
#include "ftmpi/base/params.hpp"
#include "mpi/api.hpp"
#include "mpi/runtime.hpp"

struct ftmpi_t_cvar_handle {
  int index;
};
struct ftmpi_t_pvar_session;
struct ftmpi_t_pvar_handle {
  int index;
  std::uint64_t start;  // the counter's value at allocation: reads count from there
};
struct ftmpi_t_pvar_session {
  std::vector<std::unique_ptr<ftmpi_t_pvar_handle>> handles;
};

namespace ftmpi::mpi {
namespace {

using Counter = base::Count engine::EngineCounters::*;

struct PerformanceVariable {
  std::string_view name;
  int var_class;
  Counter counter;
  std::string_view description;
};

constexpr std::string_view kCounterCategory = "engine";

const PerformanceVariable kPerformanceVariables[] = {
    {"engine.frames_sent", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::frames_sent,
     "frames this process sent on every path, resends included"},
    {"engine.frames_received", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::frames_received,
     "frames this process received on every path"},
    {"engine.bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::bytes_sent,
     "bytes of whole frames sent on every path"},
    {"engine.bytes_received", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::bytes_received,
     "bytes of whole frames received on every path"},
    {"engine.retransmits", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::retransmits,
     "frames resent (timeouts, NACKs, rails that failed)"},
    {"engine.duplicates", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::duplicates,
     "frames received whose bytes had arrived already (dropped)"},
    {"engine.dropped_bad_payload", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::dropped_bad_payload,
     "frames dropped because their payload checksum did not match (resent by the peer)"},
    {"engine.dropped_malformed", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::dropped_malformed,
     "frames the decoder refused (truncated, bad header checksum, ...)"},
    {"engine.dropped_wrong_job", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::dropped_wrong_job,
     "frames of another job (dropped)"},
    {"engine.dropped_ahead", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::dropped_ahead,
     "frames too far ahead of the next expected message (dropped, resent later)"},
    {"engine.refused_single_copy", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::refused_single_copy,
     "single-copy requests refused (not from the peer's shared memory or process)"},
    {"engine.acks_sent", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::acks_sent, "ACK frames sent"},
    {"engine.nacks_sent", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::nacks_sent,
     "NACK frames sent (asking a peer to resend)"},
    {"engine.nacks_ignored", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::nacks_ignored,
     "NACKs not acted on (the frame was sent less than half a round trip ago)"},
    {"engine.credit_rendezvous", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::credit_rendezvous,
     "eager-sized sends that went by rendezvous because the peer's eager credit ran out"},
    {"engine.credits_sent", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::credits_sent,
     "eager credit grants sent to peers"},
    {"engine.rails_down", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::rails_down,
     "rail-to-peer failures detected (their frames moved to the other rails)"},
    {"engine.rails_up", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::rails_up,
     "rails back in service after a failure (failbacks)"},
    {"engine.peers_lost", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::peers_lost,
     "peers every rail to which failed (their operations failed)"},
    {"engine.single_copy_fallbacks", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::single_copy_fallbacks,
     "single copies that could not read the sender's memory and were piped instead"},
    {"engine.single_copies_gathered", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::single_copies_gathered,
     "single copies read in one system call together with others from the same peer"},
    {"engine.split_copies", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::split_copies,
     "single copies received in two halves, the sender writing the second into the receive buffer"},
    {"engine.split_copy_rereads", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::split_copy_rereads,
     "split copies where the receiver read a half the other side could not move"},
    {"engine.frames_by_reference", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::frames_by_reference,
     "rendezvous frames kept for resending by reference to the send buffer, not copied"},
    {"engine.frames_copied_after_send", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::frames_copied_after_send,
     "eager frames sent from the send buffer and copied for resending once the path had them"},
    {"engine.sends_cancelled", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::sends_cancelled,
     "sends the receiver withdrew before matching them (MPI_Cancel)"},
    {"engine.messages_withdrawn", MPI_T_PVAR_CLASS_COUNTER, &engine::EngineCounters::messages_withdrawn,
     "peers' messages withdrawn from matching at their request"},
    {"engine.longest_answered_silence_us", MPI_T_PVAR_CLASS_HIGHWATERMARK,
     &engine::EngineCounters::longest_answered_silence_us,
     "the longest a suspect rail stayed silent before the peer answered on it, in microseconds"},
};
constexpr int kPerformanceVariableCount = static_cast<int>(std::size(kPerformanceVariables));

// Strings up to this many bytes (with the terminator) fit a control variable's buffer; longer values
// get a count that fits them.
constexpr int kStringCount = 1024;

std::mutex tools_mutex;
int initialized = 0;  // MPI_T_init_thread calls not yet matched by MPI_T_finalize
std::set<ftmpi_t_cvar_handle*> cvar_handles;
std::set<ftmpi_t_pvar_session*> sessions;

const std::vector<const base::ParamRow*>& rows() { return runtime().params.rows(); }

std::string_view category_of(std::string_view parameter) { return parameter.substr(0, parameter.find('.')); }

// The categories, in the order their first parameter appears.
std::vector<std::string_view> categories() {
  std::vector<std::string_view> names;
  for (const base::ParamRow* row : rows()) {
    const std::string_view name = category_of(row->name);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// MPI-3.1 section 14.3.3: at most *length - 1 characters and a terminator go to `out`; *length becomes
// the characters written (with the terminator), or, asked with 0, the characters the whole text needs.
void copy_string(std::string_view text, char* out, int* length) {
  if (length == nullptr) return;
  if (out == nullptr || *length <= 0) {
    *length = static_cast<int>(text.size()) + 1;
    return;
  }
  const std::size_t n = std::min(text.size(), static_cast<std::size_t>(*length - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *length = static_cast<int>(n) + 1;
}

int verbosity_of(const base::ParamRow& row) {
  switch (row.level) {
    case base::ParamLevel::basic: return MPI_T_VERBOSITY_USER_BASIC;
    case base::ParamLevel::advanced: return MPI_T_VERBOSITY_TUNER_BASIC;
    case base::ParamLevel::debug: return MPI_T_VERBOSITY_MPIDEV_DETAIL;
  }
  return MPI_T_VERBOSITY_MPIDEV_ALL;
}

MPI_Datatype datatype_of(const base::ParamRow& row) {
  switch (row.type) {
    case base::ParamType::boolean: return MPI_INT;
    case base::ParamType::integer: return MPI_COUNT;
    case base::ParamType::size: return MPI_UNSIGNED_LONG_LONG;
    case base::ParamType::duration:
    case base::ParamType::real: return MPI_DOUBLE;
    case base::ParamType::string: return MPI_CHAR;
  }
  return MPI_CHAR;
}

std::string description_of(const base::ParamRow& row) {
  std::string text(row.help);
  if (row.type == base::ParamType::duration) text += " (in seconds)";
  if (row.type == base::ParamType::size) text += " (in bytes)";
  if (row.type == base::ParamType::boolean) text += " (0 or 1)";
  if (!row.choices.empty()) text += fmt::format(" (one of {})", row.choices);
  text += row.scope == base::ParamScope::job ? "; the same on every rank" : "; may differ between ranks";
  text += "; settable before MPI_Init";
  return text;
}

int string_count(const base::ParamRow& row) {
  return std::max(kStringCount, static_cast<int>(runtime().params.text(row).size()) + 1);
}

std::uint64_t counter_now(const PerformanceVariable& variable) {
  Runtime& rt = runtime();
  const engine::EngineCounters counters =
      rt.engine != nullptr ? rt.engine->counters_snapshot() : rt.final_counters;
  return (counters.*variable.counter).load();
}

bool valid_cvar_index(int index) { return index >= 0 && static_cast<std::size_t>(index) < rows().size(); }
bool valid_pvar_index(int index) { return index >= 0 && index < kPerformanceVariableCount; }

// Whether `handle` is one of `session`'s; `session` must be valid.
bool owns(ftmpi_t_pvar_session* session, ftmpi_t_pvar_handle* handle) {
  return std::any_of(session->handles.begin(), session->handles.end(),
                     [&](const auto& owned) { return owned.get() == handle; });
}

// The checks every handle call of a session starts with: initialised, a live session, and (unless
// `all_allowed` and it is MPI_T_PVAR_ALL_HANDLES) one of its handles.
int check_pvar(MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all_allowed) {
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!sessions.contains(session)) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) return all_allowed ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
  return owns(session, handle) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int read_cvar(const base::ParamRow& row, void* buf) {
  const base::ParamSet& params = runtime().params;
  switch (row.type) {
    case base::ParamType::boolean: *static_cast<int*>(buf) = params.get_bool(row) ? 1 : 0; break;
    case base::ParamType::integer: *static_cast<MPI_Count*>(buf) = params.get_integer(row); break;
    case base::ParamType::size: *static_cast<unsigned long long*>(buf) = params.get_size(row); break;
    case base::ParamType::duration:
      *static_cast<double*>(buf) = static_cast<double>(params.get_duration(row).count()) / 1e9;
      break;
    case base::ParamType::real: *static_cast<double*>(buf) = params.get_real(row); break;
    case base::ParamType::string: {
      const std::string value = params.get_string(row);
      std::memcpy(buf, value.c_str(), value.size() + 1);  // the handle's count fits it (string_count)
      break;
    }
  }
  return MPI_SUCCESS;
}

// The value in `buf` as the parameter's text, or empty when it cannot be one (a negative duration).
std::string cvar_text(const base::ParamRow& row, const void* buf, int count) {
  switch (row.type) {
    case base::ParamType::boolean: return *static_cast<const int*>(buf) != 0 ? "true" : "false";
    case base::ParamType::integer: return std::to_string(*static_cast<const MPI_Count*>(buf));
    case base::ParamType::size: return std::to_string(*static_cast<const unsigned long long*>(buf));
    case base::ParamType::duration: {
      const double seconds = *static_cast<const double*>(buf);
      if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return {};
      return fmt::format("{}ns", std::llround(seconds * 1e9));
    }
    case base::ParamType::real: return fmt::format("{}", *static_cast<const double*>(buf));
    case base::ParamType::string: {
      const char* text = static_cast<const char*>(buf);
      return std::string(text, strnlen(text, static_cast<std::size_t>(count)));
    }
  }
  return {};
}

// The control variables of a category (indices into rows()).
std::vector<int> category_cvars(std::string_view category) {
  std::vector<int> indices;
  const auto& all = rows();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (category_of(all[i]->name) == category) indices.push_back(static_cast<int>(i));
  }
  return indices;
}

int category_pvar_count(std::string_view category) {
  return category == kCounterCategory ? kPerformanceVariableCount : 0;
}

void copy_indices(const std::vector<int>& indices, int len, int out[]) {
  const int n = std::min(len, static_cast<int>(indices.size()));
  for (int i = 0; i < n; ++i) out[i] = indices[static_cast<std::size_t>(i)];
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_T_init_thread(int required, int* provided) {
  const std::lock_guard lock(tools_mutex);
  if (provided == nullptr || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) return MPI_T_ERR_INVALID;
  if (!load_params(runtime())) return MPI_T_ERR_CANNOT_INIT;  // an FTMPI_* variable with a bad value
  ++initialized;
  *provided = required;  // every MPI_T call takes tools_mutex: any level is safe
  return MPI_SUCCESS;
}
#pragma weak MPI_T_init_thread = PMPI_T_init_thread

int PMPI_T_finalize(void) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (--initialized == 0) {  // the last one: every handle and session is gone
    for (ftmpi_t_cvar_handle* handle : cvar_handles) delete handle;
    cvar_handles.clear();
    for (ftmpi_t_pvar_session* session : sessions) delete session;
    sessions.clear();
  }
  return MPI_SUCCESS;
}
#pragma weak MPI_T_finalize = PMPI_T_finalize

// No variable is an enumeration: no enumeration handle is valid.
int PMPI_T_enum_get_info(MPI_T_enum /*enumtype*/, int* /*num*/, char* /*name*/, int* /*name_len*/) {
  const std::lock_guard lock(tools_mutex);
  return initialized == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_HANDLE;
}
#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info

int PMPI_T_enum_get_item(MPI_T_enum /*enumtype*/, int /*index*/, int* /*value*/, char* /*name*/, int* /*name_len*/) {
  const std::lock_guard lock(tools_mutex);
  return initialized == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_HANDLE;
}
#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item

int PMPI_T_cvar_get_num(int* num_cvar) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (num_cvar == nullptr) return MPI_T_ERR_INVALID;
  *num_cvar = static_cast<int>(rows().size());
  return MPI_SUCCESS;
}
#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!valid_cvar_index(cvar_index)) return MPI_T_ERR_INVALID_INDEX;
  const ftmpi::base::ParamRow& row = *rows()[static_cast<std::size_t>(cvar_index)];
  copy_string(row.name, name, name_len);
  if (verbosity != nullptr) *verbosity = verbosity_of(row);
  if (datatype != nullptr) *datatype = datatype_of(row);
  if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
  copy_string(description_of(row), desc, desc_len);
  if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope != nullptr) *scope = row.scope == ftmpi::base::ParamScope::job ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_LOCAL;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || cvar_index == nullptr) return MPI_T_ERR_INVALID;
  const auto& all = rows();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i]->name == name) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index

int PMPI_T_cvar_handle_alloc(int cvar_index, void* /*obj_handle*/, MPI_T_cvar_handle* handle, int* count) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!valid_cvar_index(cvar_index)) return MPI_T_ERR_INVALID_INDEX;
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  const ftmpi::base::ParamRow& row = *rows()[static_cast<std::size_t>(cvar_index)];
  auto made = std::make_unique<ftmpi_t_cvar_handle>(ftmpi_t_cvar_handle{cvar_index});
  cvar_handles.insert(made.get());
  *handle = made.release();
  *count = row.type == ftmpi::base::ParamType::string ? string_count(row) : 1;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (handle == nullptr || cvar_handles.erase(*handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!cvar_handles.contains(handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  return read_cvar(*rows()[static_cast<std::size_t>(handle->index)], buf);
}
#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!cvar_handles.contains(handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  Runtime& rt = runtime();
  // The engine read its parameters when it started; a change now would not reach it.
  if (rt.phase != Phase::before_init) return MPI_T_ERR_CVAR_SET_NOT_NOW;
  const ftmpi::base::ParamRow& row = *rows()[static_cast<std::size_t>(handle->index)];
  const std::string text = cvar_text(row, buf, string_count(row));
  if (text.empty() && row.type != ftmpi::base::ParamType::string) return MPI_T_ERR_INVALID;
  return rt.params.set(row.name, text) ? MPI_SUCCESS : MPI_T_ERR_INVALID;  // a value the type refuses
}
#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write

int PMPI_T_pvar_get_num(int* num_pvar) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (num_pvar == nullptr) return MPI_T_ERR_INVALID;
  *num_pvar = kPerformanceVariableCount;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind,
                         int* readonly, int* continuous, int* atomic) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!valid_pvar_index(pvar_index)) return MPI_T_ERR_INVALID_INDEX;
  const PerformanceVariable& variable = kPerformanceVariables[pvar_index];
  copy_string(variable.name, name, name_len);
  if (verbosity != nullptr) *verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  if (var_class != nullptr) *var_class = variable.var_class;
  if (datatype != nullptr) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
  copy_string(variable.description, desc, desc_len);
  if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly != nullptr) *readonly = 1;
  if (continuous != nullptr) *continuous = 1;
  if (atomic != nullptr) *atomic = 0;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || pvar_index == nullptr) return MPI_T_ERR_INVALID;
  for (int i = 0; i < kPerformanceVariableCount; ++i) {
    if (kPerformanceVariables[i].name == name && kPerformanceVariables[i].var_class == var_class) {
      *pvar_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (session == nullptr) return MPI_T_ERR_INVALID;
  auto made = std::make_unique<ftmpi_t_pvar_session>();
  sessions.insert(made.get());
  *session = made.release();
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (session == nullptr || sessions.erase(*session) == 0) return MPI_T_ERR_INVALID_SESSION;
  delete *session;  // and its handles
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* /*obj_handle*/,
                             MPI_T_pvar_handle* handle, int* count) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (!sessions.contains(session)) return MPI_T_ERR_INVALID_SESSION;
  if (!valid_pvar_index(pvar_index)) return MPI_T_ERR_INVALID_INDEX;
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  const PerformanceVariable& variable = kPerformanceVariables[pvar_index];
  const std::uint64_t start = variable.var_class == MPI_T_PVAR_CLASS_COUNTER ? counter_now(variable) : 0;
  session->handles.push_back(std::make_unique<ftmpi_t_pvar_handle>(ftmpi_t_pvar_handle{pvar_index, start}));
  *handle = session->handles.back().get();
  *count = 1;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  const std::lock_guard lock(tools_mutex);
  if (handle == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (const int code = check_pvar(session, *handle, false); code != MPI_SUCCESS) return code;
  std::erase_if(session->handles, [&](const auto& owned) { return owned.get() == *handle; });
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free

// Every variable is continuous: none can be started or stopped, so for MPI_T_PVAR_ALL_HANDLES there is
// nothing to do.
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, true); code != MPI_SUCCESS) return code;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}
#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, true); code != MPI_SUCCESS) return code;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}
#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, false); code != MPI_SUCCESS) return code;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  const PerformanceVariable& variable = kPerformanceVariables[handle->index];
  // A counter counts from its handle's allocation; the high-water mark is the process's.
  *static_cast<unsigned long long*>(buf) = counter_now(variable) - handle->start;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read

// Every variable is read-only: none can be written or reset (for MPI_T_PVAR_ALL_HANDLES: none to reset).
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* /*buf*/) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, false); code != MPI_SUCCESS) return code;
  return MPI_T_ERR_PVAR_NO_WRITE;
}
#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, true); code != MPI_SUCCESS) return code;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_WRITE;
}
#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* /*buf*/) {
  const std::lock_guard lock(tools_mutex);
  if (const int code = check_pvar(session, handle, false); code != MPI_SUCCESS) return code;
  return MPI_T_ERR_PVAR_NO_WRITE;
}
#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset

int PMPI_T_category_get_num(int* num_cat) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (num_cat == nullptr) return MPI_T_ERR_INVALID;
  *num_cat = static_cast<int>(categories().size());
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  const std::vector<std::string_view> all = categories();
  if (cat_index < 0 || static_cast<std::size_t>(cat_index) >= all.size()) return MPI_T_ERR_INVALID_INDEX;
  const std::string_view category = all[static_cast<std::size_t>(cat_index)];
  copy_string(category, name, name_len);
  const std::string description =
      category == kCounterCategory
          ? std::string("the engine's parameters (engine.*) and counters (frames, resends, rails, peers)")
          : fmt::format("ftmpi's {}.* parameters", category);
  copy_string(description, desc, desc_len);
  if (num_cvars != nullptr) *num_cvars = static_cast<int>(category_cvars(category).size());
  if (num_pvars != nullptr) *num_pvars = category_pvar_count(category);
  if (num_categories != nullptr) *num_categories = 0;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || cat_index == nullptr) return MPI_T_ERR_INVALID;
  const std::vector<std::string_view> all = categories();
  const auto found = std::find(all.begin(), all.end(), std::string_view(name));
  if (found == all.end()) return MPI_T_ERR_INVALID_NAME;
  *cat_index = static_cast<int>(found - all.begin());
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  const std::vector<std::string_view> all = categories();
  if (cat_index < 0 || static_cast<std::size_t>(cat_index) >= all.size()) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
  copy_indices(category_cvars(all[static_cast<std::size_t>(cat_index)]), len, indices);
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  const std::vector<std::string_view> all = categories();
  if (cat_index < 0 || static_cast<std::size_t>(cat_index) >= all.size()) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
  std::vector<int> pvars(static_cast<std::size_t>(category_pvar_count(all[static_cast<std::size_t>(cat_index)])));
  for (std::size_t i = 0; i < pvars.size(); ++i) pvars[i] = static_cast<int>(i);
  copy_indices(pvars, len, indices);
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars

// No category contains another.
int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (cat_index < 0 || static_cast<std::size_t>(cat_index) >= categories().size()) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories

// The variables and categories never change while the process runs.
int PMPI_T_category_changed(int* stamp) {
  const std::lock_guard lock(tools_mutex);
  if (initialized == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (stamp == nullptr) return MPI_T_ERR_INVALID;
  *stamp = 0;
  return MPI_SUCCESS;
}
#pragma weak MPI_T_category_changed = PMPI_T_category_changed

}  // extern "C"
