// Groups: ordered sets of processes (world ranks), made from communicators and from each other.
// An empty result is MPI_GROUP_EMPTY, which MPI_Group_free leaves alone.
#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

MPI_Group add_group(std::vector<int> world_ranks) {
  if (world_ranks.empty()) return MPI_GROUP_EMPTY;
  Group g;
  g.world_ranks = std::move(world_ranks);
  return runtime().groups.add(std::move(g));
}

bool contains(const Group& g, int world_rank) noexcept { return g.rank_of(world_rank) != MPI_UNDEFINED; }

// Ranks of `group` that an incl/excl list names: in range and each named once.
bool check_rank_list(Call& call, const Group& group, const std::vector<int>& ranks) {
  std::vector<bool> seen(group.world_ranks.size(), false);
  for (int r : ranks) {
    if (r < 0 || r >= group.size()) {
      call.fail(MPI_ERR_RANK, fmt::format("rank {} is not in a group of {}", r, group.size()));
      return false;
    }
    if (seen[static_cast<std::size_t>(r)]) {
      call.fail(MPI_ERR_RANK, fmt::format("rank {} is named twice", r));
      return false;
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  return true;
}

// The ranks of MPI_Group_range_incl/excl's triplets, in order.
bool expand_ranges(Call& call, const Group& group, int n, int ranges[][3], std::vector<int>& out) {
  if (!check_count(call, n) || (n > 0 && !check_arg(call, ranges, "ranges"))) return false;
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0];
    const int last = ranges[i][1];
    const int stride = ranges[i][2];
    if (stride == 0) {
      call.fail(MPI_ERR_ARG, fmt::format("range {} has stride 0", i));
      return false;
    }
    if (first < 0 || first >= group.size() || last < 0 || last >= group.size()) {
      call.fail(MPI_ERR_RANK, fmt::format("range {} ({}, {}, {}) leaves a group of {}", i, first, last, stride,
                                          group.size()));
      return false;
    }
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) out.push_back(static_cast<int>(r));
  }
  return check_rank_list(call, group, out);
}

std::vector<int> excluding(const Group& group, const std::vector<int>& ranks) {
  std::vector<bool> out(group.world_ranks.size(), false);
  for (int r : ranks) out[static_cast<std::size_t>(r)] = true;
  std::vector<int> kept;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) kept.push_back(group.world_ranks[i]);
  }
  return kept;
}

template <typename Make>
int set_operation(std::string_view name, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, Make&& make) {
  return api_call(name, [&](Call& call) {
    const Group* a = check_group(call, group1);
    const Group* b = a == nullptr ? nullptr : check_group(call, group2);
    if (b == nullptr || !check_arg(call, newgroup, "newgroup")) return;
    *newgroup = add_group(make(*a, *b));
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Group_size(MPI_Group group, int* size) {
  return api_call("MPI_Group_size", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g != nullptr && check_arg(call, size, "size")) *size = g->size();
  });
}
#pragma weak MPI_Group_size = PMPI_Group_size

int PMPI_Group_rank(MPI_Group group, int* rank) {
  return api_call("MPI_Group_rank", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g != nullptr && check_arg(call, rank, "rank")) *rank = g->rank_of(runtime().world().rank());
  });
}
#pragma weak MPI_Group_rank = PMPI_Group_rank

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int* ranks1, MPI_Group group2, int* ranks2) {
  return api_call("MPI_Group_translate_ranks", [&](Call& call) {
    const Group* a = check_group(call, group1);
    const Group* b = a == nullptr ? nullptr : check_group(call, group2);
    if (b == nullptr || !check_count(call, n)) return;
    if (n > 0 && (!check_arg(call, ranks1, "ranks1") || !check_arg(call, ranks2, "ranks2"))) return;
    for (int i = 0; i < n; ++i) {
      const int r = ranks1[i];
      if (r == MPI_PROC_NULL) {
        ranks2[i] = MPI_PROC_NULL;
        continue;
      }
      if (r < 0 || r >= a->size()) {
        call.fail(MPI_ERR_RANK, fmt::format("ranks1[{}] = {} is not in a group of {}", i, r, a->size()));
        return;
      }
      ranks2[i] = b->rank_of(a->world_ranks[static_cast<std::size_t>(r)]);
    }
  });
}
#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return api_call("MPI_Group_compare", [&](Call& call) {
    const Group* a = check_group(call, group1);
    const Group* b = a == nullptr ? nullptr : check_group(call, group2);
    if (b == nullptr || !check_arg(call, result, "result")) return;
    if (a->world_ranks == b->world_ranks) {
      *result = MPI_IDENT;
      return;
    }
    std::vector<int> sa = a->world_ranks;
    std::vector<int> sb = b->world_ranks;
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    *result = sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
  });
}
#pragma weak MPI_Group_compare = PMPI_Group_compare

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation("MPI_Group_union", group1, group2, newgroup, [](const Group& a, const Group& b) {
    std::vector<int> all = a.world_ranks;
    for (int w : b.world_ranks) {
      if (!contains(a, w)) all.push_back(w);
    }
    return all;
  });
}
#pragma weak MPI_Group_union = PMPI_Group_union

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation("MPI_Group_intersection", group1, group2, newgroup, [](const Group& a, const Group& b) {
    std::vector<int> both;
    for (int w : a.world_ranks) {
      if (contains(b, w)) both.push_back(w);
    }
    return both;
  });
}
#pragma weak MPI_Group_intersection = PMPI_Group_intersection

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation("MPI_Group_difference", group1, group2, newgroup, [](const Group& a, const Group& b) {
    std::vector<int> only;
    for (int w : a.world_ranks) {
      if (!contains(b, w)) only.push_back(w);
    }
    return only;
  });
}
#pragma weak MPI_Group_difference = PMPI_Group_difference

int PMPI_Group_incl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup) {
  return api_call("MPI_Group_incl", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g == nullptr || !check_count(call, n) || !check_arg(call, newgroup, "newgroup")) return;
    if (n > 0 && !check_arg(call, ranks, "ranks")) return;
    const std::vector<int> list(ranks, ranks + n);
    if (!check_rank_list(call, *g, list)) return;
    std::vector<int> members;
    for (int r : list) members.push_back(g->world_ranks[static_cast<std::size_t>(r)]);
    *newgroup = add_group(std::move(members));
  });
}
#pragma weak MPI_Group_incl = PMPI_Group_incl

int PMPI_Group_excl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup) {
  return api_call("MPI_Group_excl", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g == nullptr || !check_count(call, n) || !check_arg(call, newgroup, "newgroup")) return;
    if (n > 0 && !check_arg(call, ranks, "ranks")) return;
    const std::vector<int> list(ranks, ranks + n);
    if (check_rank_list(call, *g, list)) *newgroup = add_group(excluding(*g, list));
  });
}
#pragma weak MPI_Group_excl = PMPI_Group_excl

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return api_call("MPI_Group_range_incl", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g == nullptr || !check_arg(call, newgroup, "newgroup")) return;
    std::vector<int> list;
    if (!expand_ranges(call, *g, n, ranges, list)) return;
    std::vector<int> members;
    for (int r : list) members.push_back(g->world_ranks[static_cast<std::size_t>(r)]);
    *newgroup = add_group(std::move(members));
  });
}
#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return api_call("MPI_Group_range_excl", [&](Call& call) {
    const Group* g = check_group(call, group);
    if (g == nullptr || !check_arg(call, newgroup, "newgroup")) return;
    std::vector<int> list;
    if (expand_ranges(call, *g, n, ranges, list)) *newgroup = add_group(excluding(*g, list));
  });
}
#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl

int PMPI_Group_free(MPI_Group* group) {
  return api_call("MPI_Group_free", [&](Call& call) {
    if (!check_arg(call, group, "group") || check_group(call, *group) == nullptr) return;
    if (*group != MPI_GROUP_EMPTY) runtime().groups.remove(*group);
    *group = MPI_GROUP_NULL;
  });
}
#pragma weak MPI_Group_free = PMPI_Group_free

}  // extern "C"
