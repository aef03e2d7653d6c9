// Datatypes: the predefined ones and those built from them (MPI-3.1 chapter 4).
//
// A datatype is a TypeNode: a predefined type is a list of basic elements (pairs such as MPI_DOUBLE_INT
// have two), a derived one a list of blocks, each `count` consecutive items of a child type at a byte
// displacement (every constructor, from contiguous to struct, is such a list). The node keeps the
// summary MPI asks about (size, bounds, extent, basic elements) and is immutable once built.
//
// MPI_Type_commit flattens the node, once, into a Layout: one item's data as (offset, length) pieces
// in type-map order with contiguous runs merged (LA-MPI's scheme), and its basic elements as runs of
// equal sizes. Packing walks the pieces of `count` items at `extent` strides.
//
// What travels: the packed form (the type signature's data, no holes), so any two types with matching
// signatures exchange messages. A type that is "dense" (one piece of `size` bytes at offset 0 and
// extent == size) is its own packed form and travels straight from and to the user's buffer. For any
// other (a vector, a struct with holes, MPI_DOUBLE_INT with its padding) point-to-point messages give
// the engine the pieces (frag::PiecesLayout over Layout::pieces, count items at extent strides): the
// fragmenter gathers each fragment from them and scatters it into them, checksumming in the same pass,
// so no staging copy is made. Collectives and buffered sends pack (Layout::pack, the same walk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/coll/reduction.hpp"
#include "ftmpi/frag/fragmenter.hpp"
#include "mpi/api.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {

using Piece = frag::Piece;  // (displacement, length)

// `count` consecutive basic elements of `size` bytes each, in type-map order.
struct ElementRun {
  std::size_t size;
  std::size_t count;
};

// A committed type as packing sees it. Shared (by shared_ptr) with requests and collectives in flight,
// so that MPI_Type_free does not pull it from under them.
struct Layout {
  std::size_t size = 0;         // data bytes of one item
  std::ptrdiff_t extent = 0;    // distance between consecutive items
  bool dense = false;           // count items are count * size contiguous bytes from the buffer's start
  std::vector<Piece> pieces;    // one item
  std::vector<std::uint64_t> starts;  // packed offset of each piece within an item (frag::PiecesLayout)
  // Pieces of one length at a constant stride (a vector): an item is also regular_count repetitions of
  // pieces[0] every regular_stride bytes, which the fragmenter walks without looking pieces up.
  std::size_t regular_count = 0;  // 0: not regular
  std::ptrdiff_t regular_stride = 0;
  std::vector<ElementRun> elements;

  std::size_t packed_bytes(std::size_t count) const noexcept { return count * size; }
  // `count` items as the fragmenter walks them: the pieces of one item repeated every extent, or, for a
  // regular layout whose items abut in its stride (or a single item), one piece repeated every stride.
  base::Result<frag::PiecesLayout> view(std::size_t count) const;
  // Copies the data of `count` items at `from` into `to` (packed_bytes(count) bytes).
  void pack(const void* from, std::size_t count, std::byte* to) const noexcept;
  // Copies `bytes` packed bytes (any prefix of items, possibly ending inside one) into the items at `to`.
  void unpack(const std::byte* from, std::size_t bytes, void* to) const noexcept;
  // Basic elements in `bytes` packed bytes; nullopt when the last one is cut.
  std::optional<std::size_t> elements_in(std::size_t bytes) const noexcept;
};

struct TypeNode {
  struct Block {
    std::ptrdiff_t displacement = 0;
    std::size_t count = 0;
    std::shared_ptr<const TypeNode> child;
  };

  std::vector<Block> blocks;  // derived types
  std::vector<Piece> parts;   // predefined types: each basic element
  std::size_t size = 0;
  std::ptrdiff_t lb = 0;
  std::ptrdiff_t ub = 0;
  std::ptrdiff_t true_lb = 0;
  std::ptrdiff_t true_ub = 0;
  std::size_t alignment = 1;
  // lb and ub were set (MPI_Type_create_resized, here or in a child): no alignment padding is added.
  bool explicit_bounds = false;
  std::size_t elements = 0;  // basic elements per item
  // The predefined type that every element is (MPI_DATATYPE_NULL when they differ), and how many of
  // it one item holds: what lets a predefined reduction work on a derived type.
  int base = MPI_DATATYPE_NULL;
  std::size_t base_count = 0;
  // One item's data is a single run of `size` bytes at displacement 0, in type-map order, of basic
  // elements all `run_element` bytes long (0: not so). Flattening then takes `count` such items that
  // abut as one piece instead of visiting each (a contiguous type of 2^31 bytes is one piece).
  std::size_t run_element = 0;
  // At most this many pieces make one flattened item (saturates at SIZE_MAX): what commit checks
  // before it spends the memory.
  std::size_t max_pieces = 0;

  std::ptrdiff_t extent() const noexcept { return ub - lb; }
  // The flattened form (what commit computes).
  std::shared_ptr<const Layout> flatten() const;
};

// How a derived type was made (MPI_Type_get_envelope / _get_contents): the constructor and its
// arguments. The types it was made of are kept by value (node and envelope), not by handle, since the
// program may free them; MPI_Type_get_contents hands out new handles for the derived ones.
struct Envelope {
  struct Part {
    int predefined = MPI_DATATYPE_NULL;  // its handle when predefined
    std::shared_ptr<const TypeNode> node;
    std::shared_ptr<const Envelope> envelope;  // null when predefined
  };
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> integers;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Count> large_counts;  // the MPI-4 _c constructors' counts and displacements
  std::vector<Part> types;
};

struct Datatype {
  bool live = false;
  int handle = MPI_DATATYPE_NULL;
  std::string name;
  bool predefined = false;
  bool committed = false;
  std::shared_ptr<const TypeNode> node;
  std::shared_ptr<const Layout> layout;  // once committed
  std::shared_ptr<const Envelope> envelope;  // derived types; null for the predefined (MPI_COMBINER_NAMED)

  Envelope::Part as_part() const { return {predefined ? handle : MPI_DATATYPE_NULL, node, envelope}; }

  std::size_t size() const noexcept { return node->size; }
  std::ptrdiff_t extent() const noexcept { return node->extent(); }
  // Basic elements in `bytes` of packed data (MPI_Get_elements), committed or not; nullopt when the
  // bytes end inside an element.
  std::optional<std::size_t> elements_in(std::size_t bytes) const {
    return (layout ? layout : node->flatten())->elements_in(bytes);
  }
  bool dense() const noexcept { return layout->dense; }
};

using DatatypeTable = HandleTable<HandleKind::datatype, Datatype>;

// The datatype a handle names, or null (freed, never created, or another kind of handle).
// find_datatype(handle): runtime.hpp (inline: every transfer looks its type up).

// Fills the table with the predefined types (at their mpi.h handles).
void add_predefined_datatypes(DatatypeTable& table);

// A new derived type (uncommitted) in the table; returns its handle.
int add_datatype(std::shared_ptr<const TypeNode> node, std::shared_ptr<const Envelope> envelope = nullptr);

// The C type a Fortran or C++ type is laid out as (MPI_INTEGER: MPI_INT); any other handle itself.
int c_twin(int handle) noexcept;

// The reduction element kind of a predefined type; nullopt for MPI_PACKED.
std::optional<coll::Kind> kind_of(int predefined_handle) noexcept;

// Derived type constructors: the node of `count` blocks of child items at byte displacements.
// `explicit_bounds` (MPI_Type_create_resized) sets lb and extent instead of computing them.
struct BlockSpec {
  std::ptrdiff_t displacement;
  std::size_t count;
  std::shared_ptr<const TypeNode> child;
};
// Both return null when the size, bounds or element counts overflow 64 bits (MPI_ERR_COUNT to callers).
std::shared_ptr<const TypeNode> make_node(std::vector<BlockSpec> blocks);
std::shared_ptr<const TypeNode> make_resized(std::shared_ptr<const TypeNode> child, std::ptrdiff_t lb,
                                             std::ptrdiff_t extent);

// Memory a flattened item of at most `pieces` pieces would take, in bytes (saturating), and what this
// machine has: commit refuses a type whose pieces would not fit (MPI_ERR_NO_MEM).
std::size_t flattened_bytes(std::size_t pieces) noexcept;
std::size_t physical_memory() noexcept;

// Byte arithmetic on addresses that may be MPI_BOTTOM (null) plus an absolute displacement.
inline std::byte* offset_by(const void* base, std::ptrdiff_t offset) noexcept {
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(offset));
}

}  // namespace ftmpi::mpi
