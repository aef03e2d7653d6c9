// The objects programs create and free besides communicators and datatypes: groups, reduction
// operations, info objects and attribute keys, each in a HandleTable of its kind (handles.hpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ftmpi/coll/reduction.hpp"
#include "mpi/api.hpp"
#include "engine/engine.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {

// An ordered set of processes, by world rank.
struct Group {
  bool live = false;
  std::vector<int> world_ranks;

  int size() const noexcept { return static_cast<int>(world_ranks.size()); }
  // This group's rank of a world rank, or MPI_UNDEFINED.
  int rank_of(int world_rank) const noexcept;
};
using GroupTable = HandleTable<HandleKind::group, Group>;

struct OpEntry {
  bool live = false;
  bool predefined = false;
  coll::Op op = coll::Op::no_op;          // predefined
  MPI_User_function* function = nullptr;  // MPI_Op_create
  MPI_User_function_c* function_c = nullptr;  // MPI_Op_create_c
  bool commutative = true;
  std::string_view name;                  // predefined: "MPI_SUM"
};
using OpTable = HandleTable<HandleKind::op, OpEntry>;
// Puts MPI_SUM ... MPI_NO_OP at their handles.
void add_predefined_ops(OpTable& table);

struct Info {
  bool live = false;
  std::vector<std::pair<std::string, std::string>> entries;  // in the order keys were first set
};
using InfoTable = HandleTable<HandleKind::info, Info>;

// What a keyval caches attributes on. The callbacks of all three have the communicator's signature
// (their handles are all ints), so they are kept as those and called through them.
enum class KeyvalKind : std::uint8_t { comm, type, win };

struct Keyval {
  bool live = false;
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* remove = nullptr;
  void* extra_state = nullptr;
  KeyvalKind kind = KeyvalKind::comm;
  // Freed by the program. The slot is never reused: attributes set with the key keep it, and may still
  // be read and deleted through it (MPI-3.1 section 6.7.2), but no new one set.
  bool freed = false;
};
using KeyvalTable = HandleTable<HandleKind::keyval, Keyval>;

struct Comm;

// A message MPI_Mprobe / MPI_Improbe took out of matching, until its MPI_Mrecv / MPI_Imrecv.
struct Message {
  bool live = false;
  engine::MatchedMessage* matched = nullptr;
  Comm* comm = nullptr;
  int source = MPI_PROC_NULL;  // in the communicator
  int tag = 0;
};
using MessageTable = HandleTable<HandleKind::message, Message>;
// Keyval table indices below this are the predefined attribute keys (MPI_TAG_UB ... MPI_WIN_MODEL).
inline constexpr std::uint32_t kFirstUserKeyval = 32;

}  // namespace ftmpi::mpi
