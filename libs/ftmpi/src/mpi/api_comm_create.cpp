// Making and comparing communicators: MPI_Comm_dup, split, split_type, create, free, compare, names,
// groups. The protocol that agrees on context ids is in comms.hpp.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"
#include "ftmpi/coll/collectives.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/call.hpp"
#include "mpi/collective.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"
#include "mpi/shm_coll.hpp"

namespace ftmpi::mpi {
namespace {

bool is_predefined(const Comm& comm) noexcept { return comm.handle == MPI_COMM_WORLD || comm.handle == MPI_COMM_SELF; }

// Collective over comm: the lowest rank of comm on this process's host.
std::optional<int> first_rank_on_my_host(Call& call, Comm& comm) {
  const std::string mine = engine::host_identity(runtime().params);
  const auto n = static_cast<std::size_t>(comm.size());
  std::vector<std::size_t> lengths(n);
  const std::size_t my_length = mine.size();
  CollOpPtr op = make_coll_op(comm);
  op->start(coll::iallgather(op->call(), &my_length, lengths.data(), sizeof(std::size_t)));
  finish_blocking(call, std::move(op));
  if (call.failed()) return std::nullopt;
  std::vector<std::ptrdiff_t> displs(n);
  std::size_t total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    displs[r] = static_cast<std::ptrdiff_t>(total);
    total += lengths[r];
  }
  std::string all(total, '\0');
  op = make_coll_op(comm);
  op->start(coll::iallgatherv(op->call(), mine.data(), all.data(), lengths, displs));
  finish_blocking(call, std::move(op));
  if (call.failed()) return std::nullopt;
  for (std::size_t r = 0; r < n; ++r) {
    if (std::string_view(all).substr(static_cast<std::size_t>(displs[r]), lengths[r]) == mine) return static_cast<int>(r);
  }
  return comm.rank();
}

void set_result(MPI_Comm* newcomm, Comm* made) { *newcomm = made != nullptr ? made->handle : MPI_COMM_NULL; }

int compare_members(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  std::vector<int> sa = a;
  std::vector<int> sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

}  // extern "C"

namespace {

// MPI_Comm_dup and MPI_Comm_dup_with_info (whose hints, like all communicator hints, are checked and
// otherwise ignored: MPI_Comm_get_info answers with none).
int dup_call(std::string_view name, MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    // An intercommunicator agrees over both its groups (its merged group) and keeps them.
    const std::optional<std::uint32_t> context =
        c->is_inter() ? agree_context(call, *c->inter->merged, kInterContexts) : agree_context(call, *c);
    if (!context) return;
    Comm& made = c->is_inter() ? add_intercomm(c->inter->local, c->inter->remote, *context, c->inter->low)
                               : add_comm(c->members(), *context);
    made.errhandler = c->errhandler;
    made.cart = c->cart;
    made.graph = c->graph;
    if (!copy_attributes(call, c->handle, c->attributes, made.attributes)) {
      // A copy callback failed: no communicator (the copies made before it are deleted, as at free).
      Call cleanup(call.name(), call.rt());
      delete_attributes(cleanup, made.handle, made.attributes);
      made.handle = MPI_COMM_NULL;
      *newcomm = MPI_COMM_NULL;
      return;
    }
    *newcomm = made.handle;
  });
}

int idup_call(std::string_view name, MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm") || !check_arg(call, request, "request")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    // The attributes are copied now, as the parent has them when the call starts (a failed copy
    // callback fails the call before it communicates).
    auto attributes = std::make_shared<std::vector<Attribute>>();
    if (!copy_attributes(call, c->handle, c->attributes, *attributes)) {
      Call cleanup(call.name(), call.rt());
      delete_attributes(cleanup, MPI_COMM_NULL, *attributes);
      *newcomm = MPI_COMM_NULL;
      return;
    }
    idup_comm(call, *c,
              [newcomm, attributes, errhandler = c->errhandler, cart = c->cart, graph = c->graph](Comm& made) {
                made.errhandler = errhandler;
                made.cart = cart;
                made.graph = graph;
                made.attributes = std::move(*attributes);
                *newcomm = made.handle;
              },
              request);
  });
}

// MPI_Comm_free's work, also MPI_Comm_disconnect's.
void free_comm(Call& call, MPI_Comm* comm) {
  if (!check_arg(call, comm, "comm")) return;
  Comm* c = check_comm(call, *comm);
  if (c == nullptr) return;
  if (is_predefined(*c)) {
    call.fail(MPI_ERR_COMM, fmt::format("{} cannot be freed", c->name));
    return;
  }
  if (!delete_attributes(call, c->handle, c->attributes)) return;
  release_shm_colls(*c);
  // Its attached buffer goes with it, once its sends are out (as MPI_Comm_detach_buffer).
  if (c->bsend != nullptr) {
    c->bsend->drain(engine());
    c->bsend.reset();
  }
  // The slot stays (requests in flight may name it); the handle no longer finds it.
  c->handle = MPI_COMM_NULL;
  c->cart.reset();
  c->graph.reset();
  *comm = MPI_COMM_NULL;
}

}  // namespace

extern "C" {

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) { return dup_call("MPI_Comm_dup", comm, MPI_INFO_NULL, newcomm); }
#pragma weak MPI_Comm_dup = PMPI_Comm_dup

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return dup_call("MPI_Comm_dup_with_info", comm, info, newcomm);
}
#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return idup_call("MPI_Comm_idup", comm, MPI_INFO_NULL, newcomm, request);
}
#pragma weak MPI_Comm_idup = PMPI_Comm_idup

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  return idup_call("MPI_Comm_idup_with_info", comm, info, newcomm, request);
}
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info

// Communicator hints: ftmpi uses none (MPI-4's assertions such as mpi_assert_no_any_tag included), so
// they are checked and ignored, and MPI_Comm_get_info answers with an empty info object.
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  return api_call("MPI_Comm_set_info", [&](Call& call) {
    if (check_comm(call, comm) != nullptr) check_info(call, info);
  });
}
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  return api_call("MPI_Comm_get_info", [&](Call& call) {
    if (check_comm(call, comm) != nullptr && check_arg(call, info_used, "info_used")) {
      *info_used = runtime().infos.add(Info{});
    }
  });
}
#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return api_call("MPI_Comm_split", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    if (color < 0 && color != MPI_UNDEFINED) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid color {} (a color is >= 0 or MPI_UNDEFINED)", color));
      return;
    }
    const std::optional<Comm*> made = c->is_inter() ? split_inter(call, *c, color, key) : split_comm(call, *c, color, key);
    if (!made) return;
    if (*made != nullptr) (*made)->errhandler = c->errhandler;
    set_result(newcomm, *made);
  });
}
#pragma weak MPI_Comm_split = PMPI_Comm_split

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return api_call("MPI_Comm_split_type", [&](Call& call) {
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid split type {} (MPI_COMM_TYPE_SHARED or MPI_UNDEFINED)", split_type));
      return;
    }
    // Every member takes part in the host exchange, whatever its split type, so that all make the same calls.
    const std::optional<int> host = first_rank_on_my_host(call, *c);
    if (!host) return;
    const std::optional<Comm*> made = split_comm(call, *c, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : *host, key);
    if (!made) return;
    if (*made != nullptr) (*made)->errhandler = c->errhandler;
    set_result(newcomm, *made);
  });
}
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return api_call("MPI_Comm_create", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    const Group* g = check_group(call, group);
    if (g == nullptr) return;
    if (c->is_inter()) {
      // The new intercommunicator's groups: the members of each side's group, in its order.
      const std::vector<int>& local = c->inter->local;
      const auto at = std::find(g->world_ranks.begin(), g->world_ranks.end(), local[static_cast<std::size_t>(c->rank())]);
      for (int w : g->world_ranks) {
        if (std::find(local.begin(), local.end(), w) == local.end()) {
          call.fail(MPI_ERR_GROUP, fmt::format("the group holds world rank {}, which is not in the local group of {}",
                                               w, label(*c)));
          return;
        }
      }
      const bool member = at != g->world_ranks.end();
      const std::optional<Comm*> made =
          split_inter(call, *c, member ? 0 : MPI_UNDEFINED, member ? static_cast<int>(at - g->world_ranks.begin()) : 0);
      if (!made) return;
      if (*made != nullptr) (*made)->errhandler = c->errhandler;
      set_result(newcomm, *made);
      return;
    }
    std::vector<int> ranks;
    ranks.reserve(g->world_ranks.size());
    for (int w : g->world_ranks) {
      const int r = c->view.comm_rank_of(w);
      if (r < 0) {
        call.fail(MPI_ERR_GROUP, fmt::format("the group holds world rank {}, which is not in {}", w, label(*c)));
        return;
      }
      ranks.push_back(r);
    }
    const std::optional<Comm*> made = create_comm(call, *c, ranks);
    if (!made) return;
    if (*made != nullptr) (*made)->errhandler = c->errhandler;
    set_result(newcomm, *made);
  });
}
#pragma weak MPI_Comm_create = PMPI_Comm_create

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return api_call("MPI_Comm_create_group", [&](Call& call) {
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    const Group* g = check_group(call, group);
    if (g == nullptr) return;
    if (tag < 0) {
      call.fail(MPI_ERR_TAG, fmt::format("invalid tag {} (MPI_Comm_create_group takes a tag from 0 to MPI_TAG_UB)", tag));
      return;
    }
    for (int w : g->world_ranks) {
      if (c->view.comm_rank_of(w) < 0) {
        call.fail(MPI_ERR_GROUP, fmt::format("the group holds world rank {}, which is not in {}", w, label(*c)));
        return;
      }
    }
    // A process outside the group takes no part (MPI-3.1 section 6.4.2).
    if (g->rank_of(runtime().world().rank()) == MPI_UNDEFINED) {
      *newcomm = MPI_COMM_NULL;
      return;
    }
    const std::optional<Comm*> made = create_group_comm(call, *c, g->world_ranks, tag);
    if (!made) return;
    (*made)->errhandler = c->errhandler;
    set_result(newcomm, *made);
  });
}
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group

int PMPI_Comm_free(MPI_Comm* comm) {
  return api_call("MPI_Comm_free", [&](Call& call) { free_comm(call, comm); });
}
#pragma weak MPI_Comm_free = PMPI_Comm_free

// MPI_Comm_disconnect (MPI-3.1 section 10.5.4): collective; every member's communication on it is
// complete once all have entered (the program must have matched it), then the communicator is freed.
int PMPI_Comm_disconnect(MPI_Comm* comm) {
  return api_call("MPI_Comm_disconnect", [&](Call& call) {
    if (!check_arg(call, comm, "comm")) return;
    Comm* c = check_comm(call, *comm);
    if (c == nullptr) return;
    if (is_predefined(*c)) {
      call.fail(MPI_ERR_COMM, fmt::format("{} cannot be disconnected", c->name));
      return;
    }
    Comm& over = c->is_inter() ? *c->inter->merged : *c;
    CollOpPtr op = make_coll_op(over);
    op->start(ftmpi::coll::ibarrier(op->call()));
    finish_blocking(call, std::move(op));
    if (!call.failed()) free_comm(call, comm);
  });
}
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return api_call("MPI_Comm_compare", [&](Call& call) {
    const Comm* a = check_comm(call, comm1);
    const Comm* b = a == nullptr ? nullptr : check_comm(call, comm2);
    if (b == nullptr || !check_arg(call, result, "result")) return;
    if (a == b) {
      *result = MPI_IDENT;
      return;
    }
    if (a->is_inter() != b->is_inter()) {
      *result = MPI_UNEQUAL;
      return;
    }
    int same = compare_members(a->members(), b->members());
    if (a->is_inter()) {
      // Both groups count (MPI-3.1 section 6.6.1): the weaker of the two comparisons.
      const int remote = compare_members(a->inter->remote, b->inter->remote);
      same = std::max(same, remote);  // MPI_IDENT < MPI_SIMILAR < MPI_UNEQUAL
    }
    *result = same == MPI_IDENT ? MPI_CONGRUENT : same;
  });
}
#pragma weak MPI_Comm_compare = PMPI_Comm_compare

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  return api_call("MPI_Comm_set_name", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, comm_name, "comm_name")) return;
    c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  return api_call("MPI_Comm_get_name", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, comm_name, "comm_name") || !check_arg(call, resultlen, "resultlen")) return;
    std::memcpy(comm_name, c->name.data(), c->name.size());
    comm_name[c->name.size()] = '\0';
    *resultlen = static_cast<int>(c->name.size());
  });
}
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return api_call("MPI_Comm_group", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, group, "group")) return;
    Group g;
    g.world_ranks = c->members();
    *group = runtime().groups.add(std::move(g));
  });
}
#pragma weak MPI_Comm_group = PMPI_Comm_group

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  return api_call("MPI_Comm_test_inter", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr && check_arg(call, flag, "flag")) *flag = c->is_inter() ? 1 : 0;
  });
}
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  return api_call("MPI_Comm_remote_size", [&](Call& call) {
    const Comm* c = check_inter(call, comm);
    if (c != nullptr && check_arg(call, size, "size")) *size = c->size();
  });
}
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  return api_call("MPI_Comm_remote_group", [&](Call& call) {
    const Comm* c = check_inter(call, comm);
    if (c == nullptr || !check_arg(call, group, "group")) return;
    Group g;
    g.world_ranks = c->inter->remote;
    *group = runtime().groups.add(std::move(g));
  });
}
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm* newintercomm) {
  return api_call("MPI_Intercomm_create", [&](Call& call) {
    Comm* local = check_intra(call, local_comm);
    if (local == nullptr || !check_arg(call, newintercomm, "newintercomm")) return;
    if (local_leader < 0 || local_leader >= local->size()) {
      call.fail(MPI_ERR_RANK, fmt::format("local_leader {} is not a rank of {} ({} ranks)", local_leader, label(*local),
                                          local->size()));
      return;
    }
    // peer_comm, remote_leader and tag matter at the local leader only.
    const Comm* peer = nullptr;
    if (local->rank() == local_leader) {
      peer = check_comm(call, peer_comm);
      if (peer == nullptr) return;
      if (remote_leader < 0 || remote_leader >= peer->size() || remote_leader == peer->rank()) {
        call.fail(MPI_ERR_RANK, fmt::format("remote_leader {} is not another rank of {} ({} ranks)", remote_leader,
                                            label(*peer), peer->size()));
        return;
      }
      if (tag < 0 || tag > kTagUb) {
        call.fail(MPI_ERR_TAG, fmt::format("invalid tag {}", tag));
        return;
      }
      call.raise_on(*local);
    }
    const std::optional<Comm*> made = create_intercomm(call, *local, local_leader, peer, remote_leader, tag);
    if (!made) return;
    (*made)->errhandler = local->errhandler;
    *newintercomm = (*made)->handle;
  });
}
#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return api_call("MPI_Intercomm_merge", [&](Call& call) {
    Comm* c = check_inter(call, intercomm);
    if (c == nullptr || !check_arg(call, newintracomm, "newintracomm")) return;
    // Every member's `high` over the merged group (the low group first): the group that said false
    // comes first, the low group when both said the same.
    Comm& merged = *c->inter->merged;
    const int mine = high != 0 ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(merged.size()));
    CollOpPtr op = make_coll_op(merged);
    op->start(ftmpi::coll::iallgather(op->call(), &mine, all.data(), sizeof(int)));
    finish_blocking(call, std::move(op));
    if (call.failed()) return;
    const int low_size = c->inter->low ? c->local_size() : c->size();
    const int low_high = all.front();
    const int high_high = all.back();
    std::vector<int> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    if (low_high > high_high) std::rotate(order.begin(), order.begin() + low_size, order.end());
    const std::optional<Comm*> made = create_comm(call, merged, order);
    if (!made || *made == nullptr) return;
    (*made)->errhandler = c->errhandler;
    *newintracomm = (*made)->handle;
  });
}
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge

}  // extern "C"
