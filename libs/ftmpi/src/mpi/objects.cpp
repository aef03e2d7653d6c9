#include "mpi/objects.hpp"

#include <algorithm>

namespace ftmpi::mpi {

int Group::rank_of(int world_rank) const noexcept {
  const auto it = std::find(world_ranks.begin(), world_ranks.end(), world_rank);
  return it == world_ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - world_ranks.begin());
}

void add_predefined_ops(OpTable& table) {
  struct Row {
    MPI_Op handle;
    coll::Op op;
    std::string_view name;
  };
  static constexpr Row kOps[] = {
      {MPI_SUM, coll::Op::sum, "MPI_SUM"},       {MPI_PROD, coll::Op::prod, "MPI_PROD"},
      {MPI_MIN, coll::Op::min, "MPI_MIN"},       {MPI_MAX, coll::Op::max, "MPI_MAX"},
      {MPI_LAND, coll::Op::land, "MPI_LAND"},    {MPI_LOR, coll::Op::lor, "MPI_LOR"},
      {MPI_LXOR, coll::Op::lxor, "MPI_LXOR"},    {MPI_BAND, coll::Op::band, "MPI_BAND"},
      {MPI_BOR, coll::Op::bor, "MPI_BOR"},       {MPI_BXOR, coll::Op::bxor, "MPI_BXOR"},
      {MPI_MINLOC, coll::Op::minloc, "MPI_MINLOC"}, {MPI_MAXLOC, coll::Op::maxloc, "MPI_MAXLOC"},
      {MPI_REPLACE, coll::Op::replace, "MPI_REPLACE"}, {MPI_NO_OP, coll::Op::no_op, "MPI_NO_OP"},
  };
  for (const Row& row : kOps) {
    OpEntry entry;
    entry.predefined = true;
    entry.op = row.op;
    entry.commutative = true;
    entry.name = row.name;
    table.put(*handle_index(row.handle, HandleKind::op), std::move(entry));
  }
  // User ops start above the predefined ones, with room for more.
  table.reserve(32);
}

}  // namespace ftmpi::mpi
