// Attribute caching on datatypes, and keyvals for windows (MPI-3.1 sections 6.7.3 and 6.7.4): keyvals
// live in the same table as communicators' (Keyval::kind tells them apart), datatypes' attributes in
// Runtime::type_attributes by handle. There are no windows yet, so a window's attributes cannot be set.
#include "mpi/type_attributes.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

Keyval* check_keyval(Call& call, int keyval, KeyvalKind kind, std::string_view what) {
  Keyval* k = runtime().keyvals.find(keyval);
  if (k == nullptr || k->kind != kind) {
    call.fail(MPI_ERR_KEYVAL, k == nullptr ? fmt::format("invalid attribute key {:#x}", keyval)
                                           : fmt::format("attribute key {:#x} is not a {}'s", keyval, what));
    return nullptr;
  }
  return k;
}

int create_keyval(Call& call, KeyvalKind kind, MPI_Comm_copy_attr_function* copy,
                  MPI_Comm_delete_attr_function* remove, int* keyval, void* extra_state) {
  if (!check_arg(call, keyval, "keyval")) return MPI_KEYVAL_INVALID;
  Keyval k;
  k.copy = copy;
  k.remove = remove;
  k.extra_state = extra_state;
  k.kind = kind;
  return *keyval = runtime().keyvals.add(std::move(k));
}

void free_keyval(Call& call, KeyvalKind kind, int* keyval, std::string_view what) {
  if (!check_arg(call, keyval, "keyval") || check_keyval(call, *keyval, kind, what) == nullptr) return;
  runtime().keyvals.remove(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
}

int status_of(Call& call, int rc, std::string_view what, int keyval) {
  if (rc == MPI_SUCCESS) return rc;
  call.fail(rc >= MPI_SUCCESS && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER,
            fmt::format("the {} callback of attribute key {:#x} returned {}", what, keyval, rc));
  return rc;
}

std::vector<Attribute>::iterator find_attribute(std::vector<Attribute>& list, int keyval) {
  return std::find_if(list.begin(), list.end(), [&](const Attribute& a) { return a.keyval == keyval; });
}

void fail_no_windows(Call& call) {
  call.fail(MPI_ERR_WIN, "there are no windows: one-sided communication is not implemented yet");
}

}  // namespace

bool copy_type_attributes(Call& call, int from, int to) {
  Runtime& rt = runtime();
  const auto it = rt.type_attributes.find(from);
  if (it == rt.type_attributes.end()) return true;
  const std::vector<Attribute> attributes = it->second;  // callbacks may set attributes themselves
  for (const Attribute& a : attributes) {
    if (a.copy == nullptr) continue;  // MPI_TYPE_NULL_COPY_FN
    void* copied = nullptr;
    int flag = 0;
    if (status_of(call, a.copy(from, a.keyval, a.extra_state, a.value, &copied, &flag), "copy", a.keyval) != 0) {
      return false;
    }
    if (flag != 0) {
      Attribute b = a;
      b.value = copied;
      rt.type_attributes[to].push_back(b);
    }
  }
  return true;
}

bool delete_type_attributes(Call& call, int type) {
  Runtime& rt = runtime();
  const auto it = rt.type_attributes.find(type);
  if (it == rt.type_attributes.end()) return true;
  const std::vector<Attribute> attributes = std::move(it->second);
  rt.type_attributes.erase(it);
  for (const Attribute& a : attributes) {
    if (a.remove != nullptr && status_of(call, a.remove(type, a.keyval, a.value, a.extra_state), "delete", a.keyval) != 0) {
      return false;
    }
  }
  return true;
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
                  [&](Call& call) { free_keyval(call, KeyvalKind::type, type_keyval, "datatype"); });
}
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  return api_call("MPI_Type_set_attr", [&](Call& call) {
    if (check_datatype(call, datatype) == nullptr) return;
    const Keyval* k = check_keyval(call, type_keyval, KeyvalKind::type, "datatype");
    if (k == nullptr) return;
    std::vector<Attribute>& list = runtime().type_attributes[datatype];
    const auto it = find_attribute(list, type_keyval);
    if (it == list.end()) {
      list.push_back({type_keyval, attribute_val, k->copy, k->remove, k->extra_state});
      return;
    }
    // The old value is deleted as MPI_Type_delete_attr would.
    if (it->remove != nullptr &&
        status_of(call, it->remove(datatype, type_keyval, it->value, it->extra_state), "delete", type_keyval) != 0) {
      return;
    }
    it->value = attribute_val;
  });
}
#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  return api_call("MPI_Type_get_attr", [&](Call& call) {
    if (check_datatype(call, datatype) == nullptr || !check_arg(call, attribute_val, "attribute_val") ||
        !check_arg(call, flag, "flag") || check_keyval(call, type_keyval, KeyvalKind::type, "datatype") == nullptr) {
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
        check_keyval(call, type_keyval, KeyvalKind::type, "datatype") == nullptr) {
      return;
    }
    std::vector<Attribute>& list = runtime().type_attributes[datatype];
    const auto it = find_attribute(list, type_keyval);
    if (it == list.end()) return;
    if (it->remove != nullptr &&
        status_of(call, it->remove(datatype, type_keyval, it->value, it->extra_state), "delete", type_keyval) != 0) {
      return;
    }
    list.erase(it);
  });
}
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr

// MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN: the copy gets the same value. Callable outside MPI.
int PMPI_Type_dup_fn(MPI_Datatype /*oldtype*/, int /*type_keyval*/, void* /*extra_state*/, void* attribute_val_in,
                     void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}
#pragma weak MPI_Type_dup_fn = PMPI_Type_dup_fn

int PMPI_Win_dup_fn(MPI_Win /*oldwin*/, int /*win_keyval*/, void* /*extra_state*/, void* attribute_val_in,
                    void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
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
  return api_call("MPI_Win_free_keyval", [&](Call& call) { free_keyval(call, KeyvalKind::win, win_keyval, "window"); });
}
#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval

int PMPI_Win_set_attr(MPI_Win /*win*/, int /*win_keyval*/, void* /*attribute_val*/) {
  return api_call("MPI_Win_set_attr", [&](Call& call) { fail_no_windows(call); });
}
#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr

int PMPI_Win_get_attr(MPI_Win /*win*/, int /*win_keyval*/, void* /*attribute_val*/, int* /*flag*/) {
  return api_call("MPI_Win_get_attr", [&](Call& call) { fail_no_windows(call); });
}
#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr

int PMPI_Win_delete_attr(MPI_Win /*win*/, int /*win_keyval*/) {
  return api_call("MPI_Win_delete_attr", [&](Call& call) { fail_no_windows(call); });
}
#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr

}  // extern "C"
