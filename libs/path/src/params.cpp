#include "ftmpi/path/params.hpp"

#include <vector>

#include "ftmpi/path/registry.hpp"

namespace ftmpi::path {

// The library's own rows, then each registered driver's.
std::span<const base::ParamRow> path_params() noexcept {
  static const std::vector<base::ParamRow> rows = [] {
    std::vector<base::ParamRow> all{kKinds, kFault, kFaultPlan};
    for (const Driver* d : drivers()) all.insert(all.end(), d->params().begin(), d->params().end());
    return all;
  }();
  return rows;
}

}  // namespace ftmpi::path
