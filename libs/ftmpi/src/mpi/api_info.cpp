// Info objects: (key, value) strings in the order keys were first set. ftmpi reads no hints from
// them; they exist so that programs can pass them. As MPI-4 allows, they work before MPI_Init and
// after MPI_Finalize too.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

bool check_key(Call& call, const char* key) {
  if (!check_arg(call, key, "key")) return false;
  const std::size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
  if (n == 0 || n > MPI_MAX_INFO_KEY) {
    call.fail(MPI_ERR_INFO_KEY, n == 0 ? std::string("empty info key")
                                       : fmt::format("info key longer than MPI_MAX_INFO_KEY ({})", MPI_MAX_INFO_KEY));
    return false;
  }
  return true;
}

auto find_key(Info& info, std::string_view key) {
  return std::find_if(info.entries.begin(), info.entries.end(), [&](const auto& e) { return e.first == key; });
}

// MPI_INFO_ENV describes the process: it is read, duplicated, never changed or freed.
bool writable(Call& call, MPI_Info info) {
  if (info != MPI_INFO_ENV) return true;
  call.fail(MPI_ERR_INFO, "MPI_INFO_ENV is predefined: it can be read and duplicated, not changed or freed");
  return false;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  return api_call("MPI_Info_create", [&](Call& call) {
    if (check_arg(call, info, "info")) *info = runtime().infos.add(Info{});
  }, Needs::nothing);
}
#pragma weak MPI_Info_create = PMPI_Info_create

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  return api_call("MPI_Info_set", [&](Call& call) {
    if (!writable(call, info)) return;
    Info* i = check_info(call, info);
    if (i == nullptr || !check_key(call, key) || !check_arg(call, value, "value")) return;
    if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL) {
      call.fail(MPI_ERR_INFO_VALUE, fmt::format("info value longer than MPI_MAX_INFO_VAL ({})", MPI_MAX_INFO_VAL));
      return;
    }
    const auto it = find_key(*i, key);
    if (it != i->entries.end()) {
      it->second = value;
    } else {
      i->entries.emplace_back(key, value);
    }
  }, Needs::nothing);
}
#pragma weak MPI_Info_set = PMPI_Info_set

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  return api_call("MPI_Info_get", [&](Call& call) {
    Info* i = check_info(call, info);
    if (i == nullptr || !check_key(call, key) || !check_arg(call, flag, "flag")) return;
    if (valuelen < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("negative valuelen {}", valuelen));
      return;
    }
    const auto it = find_key(*i, key);
    *flag = it != i->entries.end() ? 1 : 0;
    if (!*flag || !check_arg(call, value, "value")) return;
    // value has room for valuelen characters and the terminating null.
    const std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }, Needs::nothing);
}
#pragma weak MPI_Info_get = PMPI_Info_get

// MPI-4's MPI_Info_get: `buflen` in, the room in value (terminating null included); out, the room the
// whole value needs. With buflen 0 nothing is written: how callers ask for the length.
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  return api_call("MPI_Info_get_string", [&](Call& call) {
    Info* i = check_info(call, info);
    if (i == nullptr || !check_key(call, key) || !check_arg(call, buflen, "buflen") || !check_arg(call, flag, "flag")) {
      return;
    }
    if (*buflen < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("negative buflen {}", *buflen));
      return;
    }
    const auto it = find_key(*i, key);
    *flag = it != i->entries.end() ? 1 : 0;
    if (!*flag) return;
    const auto room = static_cast<std::size_t>(*buflen);
    *buflen = static_cast<int>(it->second.size() + 1);
    if (room == 0) return;
    if (!check_arg(call, value, "value")) return;
    const std::size_t n = std::min(it->second.size(), room - 1);
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }, Needs::nothing);
}
#pragma weak MPI_Info_get_string = PMPI_Info_get_string

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  return api_call("MPI_Info_get_valuelen", [&](Call& call) {
    Info* i = check_info(call, info);
    if (i == nullptr || !check_key(call, key) || !check_arg(call, valuelen, "valuelen") ||
        !check_arg(call, flag, "flag")) {
      return;
    }
    const auto it = find_key(*i, key);
    *flag = it != i->entries.end() ? 1 : 0;
    if (*flag) *valuelen = static_cast<int>(it->second.size());
  }, Needs::nothing);
}
#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen

int PMPI_Info_delete(MPI_Info info, const char* key) {
  return api_call("MPI_Info_delete", [&](Call& call) {
    if (!writable(call, info)) return;
    Info* i = check_info(call, info);
    if (i == nullptr || !check_key(call, key)) return;
    const auto it = find_key(*i, key);
    if (it == i->entries.end()) {
      call.fail(MPI_ERR_INFO_NOKEY, fmt::format("info key '{}' is not set", key));
      return;
    }
    i->entries.erase(it);
  }, Needs::nothing);
}
#pragma weak MPI_Info_delete = PMPI_Info_delete

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  return api_call("MPI_Info_get_nkeys", [&](Call& call) {
    const Info* i = check_info(call, info);
    if (i != nullptr && check_arg(call, nkeys, "nkeys")) *nkeys = static_cast<int>(i->entries.size());
  }, Needs::nothing);
}
#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  return api_call("MPI_Info_get_nthkey", [&](Call& call) {
    const Info* i = check_info(call, info);
    if (i == nullptr || !check_arg(call, key, "key")) return;
    if (n < 0 || n >= static_cast<int>(i->entries.size())) {
      call.fail(MPI_ERR_ARG, fmt::format("key number {} of an info object with {} keys", n, i->entries.size()));
      return;
    }
    const std::string& k = i->entries[static_cast<std::size_t>(n)].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
  }, Needs::nothing);
}
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  return api_call("MPI_Info_dup", [&](Call& call) {
    const Info* i = check_info(call, info);
    if (i == nullptr || !check_arg(call, newinfo, "newinfo")) return;
    Info copy;
    copy.entries = i->entries;
    *newinfo = runtime().infos.add(std::move(copy));
  }, Needs::nothing);
}
#pragma weak MPI_Info_dup = PMPI_Info_dup

int PMPI_Info_free(MPI_Info* info) {
  return api_call("MPI_Info_free", [&](Call& call) {
    if (!check_arg(call, info, "info") || !writable(call, *info) || check_info(call, *info) == nullptr) return;
    runtime().infos.remove(*info);
    *info = MPI_INFO_NULL;
  }, Needs::nothing);
}
#pragma weak MPI_Info_free = PMPI_Info_free

}  // extern "C"
