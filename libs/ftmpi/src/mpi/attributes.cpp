// Attribute caching (attributes.hpp): the keyvals and callbacks every kind of object shares; the calls
// of datatypes' attributes (Runtime::type_attributes, by handle) and windows' (Window::attributes).
// Communicators' calls are in api_comm.cpp.
#include "mpi/attributes.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/runtime.hpp"
#include "mpi/window.hpp"

namespace ftmpi::mpi {
namespace {

std::string_view kind_name(KeyvalKind kind) noexcept {
  switch (kind) {
    case KeyvalKind::comm: return "communicator";
    case KeyvalKind::type: return "datatype";
    case KeyvalKind::win: return "window";
  }
  return "object";
}

bool callback_succeeded(Call& call, int rc, std::string_view what, int keyval) {
  if (rc == MPI_SUCCESS) return true;
  call.fail(is_error_class(rc) ? rc : MPI_ERR_OTHER,
            fmt::format("the {} callback of attribute key {:#x} returned {}", what, keyval, rc));
  return false;
}

std::vector<Attribute>::iterator find_attribute(std::vector<Attribute>& list, int keyval) {
  return std::find_if(list.begin(), list.end(), [&](const Attribute& a) { return a.keyval == keyval; });
}

bool is_predefined_window_key(int keyval) noexcept {
  return keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL;
}

}  // namespace

Keyval* check_keyval(Call& call, int keyval, KeyvalKind kind, bool freed_ok) {
  Keyval* k = runtime().keyvals.find(keyval);
  if (k == nullptr || k->kind != kind || (k->freed && !freed_ok)) {
    call.fail(MPI_ERR_KEYVAL, k == nullptr      ? fmt::format("invalid attribute key {:#x}", keyval)
                              : k->kind != kind ? fmt::format("attribute key {:#x} is not a {}'s", keyval, kind_name(kind))
                                                : fmt::format("attribute key {:#x} was freed", keyval));
    return nullptr;
  }
  return k;
}

void create_keyval(Call& call, KeyvalKind kind, MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* remove,
                   int* keyval, void* extra_state) {
  if (!check_arg(call, keyval, "keyval")) return;
  Keyval k;
  k.copy = copy;
  k.remove = remove;
  k.extra_state = extra_state;
  k.kind = kind;
  *keyval = runtime().keyvals.add(std::move(k));
}

void free_keyval(Call& call, KeyvalKind kind, int* keyval) {
  if (!check_arg(call, keyval, "keyval")) return;
  Keyval* k = check_keyval(call, *keyval, kind);
  if (k == nullptr) return;
  k->freed = true;
  *keyval = MPI_KEYVAL_INVALID;
}

bool copy_attributes(Call& call, int handle, const std::vector<Attribute>& from, std::vector<Attribute>& to) {
  for (const Attribute& a : from) {
    if (a.copy == nullptr) continue;  // MPI_*_NULL_COPY_FN
    void* copied = nullptr;
    int flag = 0;
    if (!callback_succeeded(call, a.copy(handle, a.keyval, a.extra_state, a.value, &copied, &flag), "copy", a.keyval)) {
      return false;
    }
    if (flag != 0) {
      Attribute b = a;
      b.value = copied;
      to.push_back(b);
    }
  }
  return true;
}

bool delete_attribute(Call& call, int handle, const Attribute& a) {
  return a.remove == nullptr ||  // MPI_*_NULL_DELETE_FN
         callback_succeeded(call, a.remove(handle, a.keyval, a.value, a.extra_state), "delete", a.keyval);
}

bool delete_attributes(Call& call, int handle, std::vector<Attribute>& attributes, bool last_set_first) {
  std::vector<Attribute> going = std::move(attributes);
  attributes.clear();
  if (last_set_first) std::reverse(going.begin(), going.end());
  for (const Attribute& a : going) {
    if (!delete_attribute(call, handle, a)) return false;
  }
  return true;
}

bool copy_type_attributes(Call& call, int from, int to) {
  Runtime& rt = runtime();
  const auto it = rt.type_attributes.find(from);
  if (it == rt.type_attributes.end()) return true;
  const std::vector<Attribute> attributes = it->second;  // a callback may set attributes on `from`
  return copy_attributes(call, from, attributes, rt.type_attributes[to]);
}

bool delete_type_attributes(Call& call, int type) {
  Runtime& rt = runtime();
  const auto it = rt.type_attributes.find(type);
  if (it == rt.type_attributes.end()) return true;
  std::vector<Attribute> attributes = std::move(it->second);
  rt.type_attributes.erase(it);
  return delete_attributes(call, type, attributes);
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval, void* extra_state) {
  return api_call("MPI_Type_create_keyval", [&](Call& call) {
    create_keyval(call, KeyvalKind::type, reinterpret_cast<MPI_Comm_copy_attr_function*>(type_copy_attr_fn),
                  reinterpret_cast<MPI_Comm_delete_attr_function*>(type_delete_attr_fn), type_keyval, extra_state);
  });
}
#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval

int PMPI_Type_free_keyval(int* type_keyval) {
  return api_call("MPI_Type_free_keyval",
                  [&](Call& call) { free_keyval(call, KeyvalKind::type, type_keyval); });
}
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  return api_call("MPI_Type_set_attr", [&](Call& call) {
    if (check_datatype(call, datatype) == nullptr) return;
    const Keyval* k = check_keyval(call, type_keyval, KeyvalKind::type);
    if (k == nullptr) return;
    std::vector<Attribute>& list = runtime().type_attributes[datatype];
    const auto it = find_attribute(list, type_keyval);
    if (it == list.end()) {
      list.push_back({type_keyval, attribute_val, k->copy, k->remove, k->extra_state});
      return;
    }
    // The old value is deleted as MPI_Type_delete_attr would.
    if (delete_attribute(call, datatype, *it)) it->value = attribute_val;
  });
}
#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  return api_call("MPI_Type_get_attr", [&](Call& call) {
    if (check_datatype(call, datatype) == nullptr || !check_arg(call, attribute_val, "attribute_val") ||
        !check_arg(call, flag, "flag") || check_keyval(call, type_keyval, KeyvalKind::type, true) == nullptr) {
      return;
    }
    std::vector<Attribute>& list = runtime().type_attributes[datatype];
    const auto it = find_attribute(list, type_keyval);
    *flag = it != list.end() ? 1 : 0;
    if (*flag) *static_cast<void**>(attribute_val) = it->value;
  });
}
#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  return api_call("MPI_Type_delete_attr", [&](Call& call) {
    if (check_datatype(call, datatype) == nullptr ||
        check_keyval(call, type_keyval, KeyvalKind::type, true) == nullptr) {
      return;
    }
    std::vector<Attribute>& list = runtime().type_attributes[datatype];
    const auto it = find_attribute(list, type_keyval);
    if (it == list.end()) return;
    if (delete_attribute(call, datatype, *it)) list.erase(it);
  });
}
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr

// MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN: the copy gets the same value, as MPI_COMM_DUP_FN gives it (the
// handles are all ints). Callable outside MPI.
int PMPI_Type_dup_fn(MPI_Datatype oldtype, int type_keyval, void* extra_state, void* attribute_val_in,
                     void* attribute_val_out, int* flag) {
  return PMPI_Comm_dup_fn(oldtype, type_keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}
#pragma weak MPI_Type_dup_fn = PMPI_Type_dup_fn

int PMPI_Win_dup_fn(MPI_Win oldwin, int win_keyval, void* extra_state, void* attribute_val_in, void* attribute_val_out,
                    int* flag) {
  return PMPI_Comm_dup_fn(oldwin, win_keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}
#pragma weak MPI_Win_dup_fn = PMPI_Win_dup_fn

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval, void* extra_state) {
  return api_call("MPI_Win_create_keyval", [&](Call& call) {
    create_keyval(call, KeyvalKind::win, reinterpret_cast<MPI_Comm_copy_attr_function*>(win_copy_attr_fn),
                  reinterpret_cast<MPI_Comm_delete_attr_function*>(win_delete_attr_fn), win_keyval, extra_state);
  });
}
#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval

int PMPI_Win_free_keyval(int* win_keyval) {
  return api_call("MPI_Win_free_keyval", [&](Call& call) { free_keyval(call, KeyvalKind::win, win_keyval); });
}
#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  return api_call("MPI_Win_set_attr", [&](Call& call) {
    Window* w = check_window(call, win);
    if (w == nullptr) return;
    if (is_predefined_window_key(win_keyval)) {
      call.fail(MPI_ERR_KEYVAL, fmt::format("attribute key {:#x} is predefined and cannot be set", win_keyval));
      return;
    }
    const Keyval* k = check_keyval(call, win_keyval, KeyvalKind::win);
    if (k == nullptr) return;
    const auto it = find_attribute(w->attributes, win_keyval);
    if (it == w->attributes.end()) {
      w->attributes.push_back({win_keyval, attribute_val, k->copy, k->remove, k->extra_state});
      return;
    }
    if (delete_attribute(call, win, *it)) it->value = attribute_val;
  });
}
#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr

// MPI_WIN_BASE gives the base address; MPI_WIN_SIZE, _DISP_UNIT, _CREATE_FLAVOR and _MODEL give
// pointers to the values (MPI-3.1 section 11.2.6).
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  return api_call("MPI_Win_get_attr", [&](Call& call) {
    Window* w = check_window(call, win);
    if (w == nullptr || !check_arg(call, attribute_val, "attribute_val") || !check_arg(call, flag, "flag")) return;
    void** out = static_cast<void**>(attribute_val);
    *flag = 1;
    switch (win_keyval) {
      case MPI_WIN_BASE: *out = w->base; return;
      case MPI_WIN_SIZE: *out = &w->size; return;
      case MPI_WIN_DISP_UNIT: *out = &w->disp_unit; return;
      case MPI_WIN_CREATE_FLAVOR: *out = &w->flavor; return;
      case MPI_WIN_MODEL: *out = &w->model; return;
      default: break;
    }
    *flag = 0;
    if (check_keyval(call, win_keyval, KeyvalKind::win, true) == nullptr) return;
    const auto it = find_attribute(w->attributes, win_keyval);
    *flag = it != w->attributes.end() ? 1 : 0;
    if (*flag) *out = it->value;
  });
}
#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  return api_call("MPI_Win_delete_attr", [&](Call& call) {
    Window* w = check_window(call, win);
    if (w == nullptr || check_keyval(call, win_keyval, KeyvalKind::win, true) == nullptr) return;
    const auto it = find_attribute(w->attributes, win_keyval);
    if (it == w->attributes.end()) return;
    if (delete_attribute(call, win, *it)) w->attributes.erase(it);
  });
}
#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr

}  // extern "C"
