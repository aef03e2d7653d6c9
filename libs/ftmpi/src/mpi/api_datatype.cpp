// Derived datatypes: the constructors (each a list of blocks, datatype.hpp), commit (which flattens),
// free, the queries, names, MPI_Pack/MPI_Unpack and addresses.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"
#include "mpi/attributes.hpp"
#include "mpi/external32.hpp"

namespace ftmpi::mpi {
namespace {

std::size_t items(MPI_Count count) noexcept { return static_cast<std::size_t>(count); }

// Block lengths (int, or MPI_Count for the _c calls): none negative.
template <typename T>
bool check_lengths(Call& call, const T* lengths, MPI_Count count, std::string_view name = "array_of_blocklengths") {
  if (count > 0 && !check_arg(call, lengths, name)) return false;
  for (MPI_Count i = 0; i < count; ++i) {
    if (lengths[i] < 0) {
      call.fail(MPI_ERR_ARG, count == 1 && name == "blocklength"
                                 ? fmt::format("blocklength is negative ({})", lengths[i])
                                 : fmt::format("{}[{}] is negative ({})", name, i, lengths[i]));
      return false;
    }
  }
  return true;
}

// A list of `count` blocks (each kept twice while the node is made): refused, rather than exhausting
// the machine, when it would not fit in its memory.
bool check_blocks(Call& call, MPI_Count count) {
  std::size_t bytes = 0;
  if (!__builtin_mul_overflow(items(count), 2 * sizeof(BlockSpec), &bytes) && bytes <= physical_memory()) return true;
  call.fail(MPI_ERR_NO_MEM, fmt::format("a type of {} blocks would take more than this machine's {} bytes of memory",
                                        count, physical_memory()));
  return false;
}

// a * b bytes as a displacement; MPI_ERR_COUNT when it does not fit.
std::optional<std::ptrdiff_t> scaled(Call& call, MPI_Count a, MPI_Count b) {
  std::ptrdiff_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  call.fail(MPI_ERR_COUNT, fmt::format("displacement {} * {} bytes does not fit 64 bits", a, b));
  return std::nullopt;
}

// How a constructor records its arguments for MPI_Type_get_contents: the classic calls' counts as
// integers and byte displacements as addresses; the _c calls' both as large counts, in argument order
// (MPI-4.0 section 5.1.13).
class Recorder {
 public:
  Recorder(Envelope& envelope, bool large) noexcept : e_(envelope), large_(large) {}
  void integer(MPI_Count value) {
    if (large_) {
      e_.large_counts.push_back(value);
    } else {
      e_.integers.push_back(static_cast<int>(value));
    }
  }
  void address(MPI_Count value) {
    if (large_) {
      e_.large_counts.push_back(value);
    } else {
      e_.addresses.push_back(static_cast<MPI_Aint>(value));
    }
  }
  template <typename T>
  void integers(const T* values, MPI_Count n) {
    for (MPI_Count i = 0; i < n; ++i) integer(values[i]);
  }
  template <typename T>
  void addresses(const T* values, MPI_Count n) {
    for (MPI_Count i = 0; i < n; ++i) address(values[i]);
  }

 private:
  Envelope& e_;
  bool large_;
};

// The new type in the table, or MPI_ERR_COUNT when its size or bounds overflowed (make_node gave null).
void add_new_type(Call& call, std::shared_ptr<const TypeNode> node, std::shared_ptr<const Envelope> envelope,
                  MPI_Datatype* newtype) {
  if (node == nullptr) {
    call.fail(MPI_ERR_COUNT, "the new type's size, bounds or extent do not fit 64 bits");
    return;
  }
  *newtype = add_datatype(std::move(node), std::move(envelope));
}

// The common frame of the constructors of one old type: checks the count, the old type and where the
// new one goes, then `blocks` lists the new type's blocks and records the envelope's arguments.
template <typename Blocks>
int construct(std::string_view name, int combiner, bool large, MPI_Count count, MPI_Datatype oldtype,
              MPI_Datatype* newtype, Blocks&& blocks) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_count(call, count) || !check_arg(call, newtype, "newtype")) return;
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr) return;
    std::vector<BlockSpec> list;
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = combiner;
    envelope->types.push_back(old->as_part());
    Recorder record(*envelope, large);
    if (!blocks(call, *old, list, record)) return;
    add_new_type(call, make_node(std::move(list)), std::move(envelope), newtype);
  });
}

int type_contiguous(std::string_view name, bool large, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct(name, MPI_COMBINER_CONTIGUOUS, large, count, oldtype, newtype,
                   [&](Call&, const Datatype& old, std::vector<BlockSpec>& list, Recorder& record) {
                     list.push_back({0, items(count), old.node});
                     record.integer(count);
                     return true;
                   });
}

// MPI_Type_vector (stride in items of the old type) and MPI_Type_create_hvector (in bytes).
int type_vector(std::string_view name, bool large, bool bytes, MPI_Count count, MPI_Count blocklength,
                MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct(name, bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, large, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Recorder& record) {
                     if (!check_lengths(call, &blocklength, 1, "blocklength") || !check_blocks(call, count)) return false;
                     const auto step = bytes ? std::optional<std::ptrdiff_t>(stride) : scaled(call, stride, old.extent());
                     if (!step) return false;
                     list.reserve(items(count));
                     for (MPI_Count i = 0; i < count; ++i) {
                       const auto displacement = scaled(call, i, *step);
                       if (!displacement) return false;
                       list.push_back({*displacement, items(blocklength), old.node});
                     }
                     record.integer(count);
                     record.integer(blocklength);
                     if (bytes) {
                       record.address(stride);
                     } else {
                       record.integer(stride);
                     }
                     return true;
                   });
}

// MPI_Type_indexed, _create_hindexed (displacements in bytes) and their _block forms (one blocklength
// for all, `lengths` not read).
template <typename L, typename D>
int type_indexed(std::string_view name, int combiner, bool large, bool bytes, MPI_Count count, const L* lengths,
                 MPI_Count blocklength, const D* displacements, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const bool block = combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
  return construct(name, combiner, large, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Recorder& record) {
                     if (block ? !check_lengths(call, &blocklength, 1, "blocklength")
                               : !check_lengths(call, lengths, count)) {
                       return false;
                     }
                     if (count > 0 && !check_arg(call, displacements, "array_of_displacements")) return false;
                     if (!check_blocks(call, count)) return false;
                     list.reserve(items(count));
                     for (MPI_Count i = 0; i < count; ++i) {
                       const auto displacement = bytes ? std::optional<std::ptrdiff_t>(displacements[i])
                                                       : scaled(call, displacements[i], old.extent());
                       if (!displacement) return false;
                       list.push_back({*displacement, items(block ? blocklength : lengths[i]), old.node});
                     }
                     record.integer(count);
                     if (block) {
                       record.integer(blocklength);
                     } else {
                       record.integers(lengths, count);
                     }
                     if (bytes) {
                       record.addresses(displacements, count);
                     } else {
                       record.integers(displacements, count);
                     }
                     return true;
                   });
}

template <typename L, typename D>
int type_struct(std::string_view name, bool large, MPI_Count count, const L* array_of_blocklengths,
                const D* array_of_displacements, const MPI_Datatype* array_of_types, MPI_Datatype* newtype) {
  return api_call(name, [&](Call& call) {
    if (!check_count(call, count) || !check_arg(call, newtype, "newtype") ||
        !check_lengths(call, array_of_blocklengths, count)) {
      return;
    }
    if (count > 0 && (!check_arg(call, array_of_displacements, "array_of_displacements") ||
                      !check_arg(call, array_of_types, "array_of_types"))) {
      return;
    }
    if (!check_blocks(call, count)) return;
    std::vector<BlockSpec> list;
    list.reserve(items(count));
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_STRUCT;
    Recorder record(*envelope, large);
    record.integer(count);
    record.integers(array_of_blocklengths, count);
    record.addresses(array_of_displacements, count);
    for (MPI_Count i = 0; i < count; ++i) {
      const Datatype* type = check_datatype(call, array_of_types[i]);
      if (type == nullptr) return;
      list.push_back({static_cast<std::ptrdiff_t>(array_of_displacements[i]), items(array_of_blocklengths[i]), type->node});
      envelope->types.push_back(type->as_part());
    }
    add_new_type(call, make_node(std::move(list)), std::move(envelope), newtype);
  });
}

int type_resized(std::string_view name, bool large, MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                 MPI_Datatype* newtype) {
  return api_call(name, [&](Call& call) {
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr || !check_arg(call, newtype, "newtype")) return;
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_RESIZED;
    Recorder record(*envelope, large);
    record.address(lb);
    record.address(extent);
    envelope->types.push_back(old->as_part());
    add_new_type(call, make_resized(old->node, lb, extent), std::move(envelope), newtype);
  });
}

void copy_name(const std::string& name, char* out, int* resultlen) {
  std::memcpy(out, name.data(), name.size());
  out[name.size()] = '\0';
  *resultlen = static_cast<int>(name.size());
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_contiguous("MPI_Type_contiguous", false, count, oldtype, newtype);
}
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_contiguous("MPI_Type_contiguous_c", true, count, oldtype, newtype);
}
#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_vector("MPI_Type_vector", false, false, count, blocklength, stride, oldtype, newtype);
}
#pragma weak MPI_Type_vector = PMPI_Type_vector

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  return type_vector("MPI_Type_vector_c", true, false, count, blocklength, stride, oldtype, newtype);
}
#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return type_vector("MPI_Type_create_hvector", false, true, count, blocklength, stride, oldtype, newtype);
}
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  return type_vector("MPI_Type_create_hvector_c", true, true, count, blocklength, stride, oldtype, newtype);
}
#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c

int PMPI_Type_indexed(int count, const int* array_of_blocklengths, const int* array_of_displacements,
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, false, false, count, array_of_blocklengths, 0,
                      array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_indexed = PMPI_Type_indexed

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count* array_of_blocklengths,
                        const MPI_Count* array_of_displacements, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, true, false, count, array_of_blocklengths, 0,
                      array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c

int PMPI_Type_create_hindexed(int count, const int* array_of_blocklengths, const MPI_Aint* array_of_displacements,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, false, true, count, array_of_blocklengths,
                      0, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count* array_of_blocklengths,
                                const MPI_Count* array_of_displacements, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, true, true, count, array_of_blocklengths,
                      0, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c

int PMPI_Type_create_indexed_block(int count, int blocklength, const int* array_of_displacements,
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, false, false, count,
                      static_cast<const int*>(nullptr), blocklength, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* array_of_displacements,
                                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, true, false, count,
                      static_cast<const MPI_Count*>(nullptr), blocklength, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint* array_of_displacements,
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, false, true, count,
                      static_cast<const int*>(nullptr), blocklength, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* array_of_displacements,
                                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_indexed("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, true, true, count,
                      static_cast<const MPI_Count*>(nullptr), blocklength, array_of_displacements, oldtype, newtype);
}
#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c

int PMPI_Type_create_struct(int count, const int* array_of_blocklengths, const MPI_Aint* array_of_displacements,
                            const MPI_Datatype* array_of_types, MPI_Datatype* newtype) {
  return type_struct("MPI_Type_create_struct", false, count, array_of_blocklengths, array_of_displacements,
                     array_of_types, newtype);
}
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count* array_of_blocklengths,
                              const MPI_Count* array_of_displacements, const MPI_Datatype* array_of_types,
                              MPI_Datatype* newtype) {
  return type_struct("MPI_Type_create_struct_c", true, count, array_of_blocklengths, array_of_displacements,
                     array_of_types, newtype);
}
#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  return type_resized("MPI_Type_create_resized", false, oldtype, lb, extent, newtype);
}
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype) {
  return type_resized("MPI_Type_create_resized_c", true, oldtype, lb, extent, newtype);
}
#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return api_call("MPI_Type_dup", [&](Call& call) {
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr || !check_arg(call, newtype, "newtype")) return;
    std::shared_ptr<const TypeNode> node = old->node;
    std::shared_ptr<const Layout> layout = old->layout;
    const bool committed = old->committed;
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_DUP;
    envelope->types.push_back(old->as_part());
    const int handle = add_datatype(std::move(node), std::move(envelope));
    Datatype* made = find_datatype(handle);
    made->committed = committed;
    made->layout = std::move(layout);
    if (!copy_type_attributes(call, oldtype, handle)) {
      // A copy callback failed: no type (the copies made before it are deleted, as at free).
      Call cleanup(call.name(), call.rt());
      delete_type_attributes(cleanup, handle);
      runtime().datatypes.remove(handle);
      *newtype = MPI_DATATYPE_NULL;
      return;
    }
    *newtype = handle;
  });
}
#pragma weak MPI_Type_dup = PMPI_Type_dup

}  // extern "C"

namespace ftmpi::mpi {
namespace {

// A subarray of an ndims-dimensional array (MPI-3.1 section 4.1.3), made of the blocks the other
// constructors make: the fastest dimension a contiguous run of subsizes items, each slower one that
// many of the faster at the array's stride, the whole placed at the start's offset, then resized to the
// full array (lb 0, extent the array's), so that consecutive items are consecutive arrays. Sizes are
// int, or MPI_Count for MPI_Type_create_subarray_c.
template <typename S>
int type_subarray(std::string_view name, bool large, int ndims, const S array_of_sizes[], const S array_of_subsizes[],
                  const S array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return api_call(name, [&](Call& call) {
    if (ndims < 1) {
      call.fail(MPI_ERR_ARG, fmt::format("ndims is {}: at least 1", ndims));
      return;
    }
    if (!check_arg(call, array_of_sizes, "array_of_sizes") || !check_arg(call, array_of_subsizes, "array_of_subsizes") ||
        !check_arg(call, array_of_starts, "array_of_starts") || !check_arg(call, newtype, "newtype")) {
      return;
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
      call.fail(MPI_ERR_ARG, fmt::format("order {} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order));
      return;
    }
    for (int d = 0; d < ndims; ++d) {
      const MPI_Count size = array_of_sizes[d], subsize = array_of_subsizes[d], start = array_of_starts[d];
      if (size < 1 || subsize < 1 || subsize > size || start < 0 || start > size - subsize) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: size {}, subsize {}, start {} (need 1 <= subsize <= size, "
                                           "0 <= start <= size - subsize)", d, size, subsize, start));
        return;
      }
    }
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr) return;
    // Dimensions from the fastest-varying: the last in C order, the first in Fortran order.
    std::vector<int> dims(static_cast<std::size_t>(ndims));
    for (int d = 0; d < ndims; ++d) dims[static_cast<std::size_t>(d)] = order == MPI_ORDER_C ? ndims - 1 - d : d;
    std::shared_ptr<const TypeNode> node = old->node;
    std::ptrdiff_t stride = old->extent(), offset = 0;  // the current dimension's stride in bytes; the start's offset
    bool fastest = true;
    for (const int d : dims) {
      std::vector<BlockSpec> blocks;
      const auto subsize = static_cast<std::size_t>(array_of_subsizes[d]);
      if (fastest) {
        blocks.push_back({0, subsize, node});  // the fastest dimension: a contiguous run
      } else {
        if (!check_blocks(call, array_of_subsizes[d])) return;
        for (std::size_t i = 0; i < subsize; ++i) blocks.push_back({static_cast<std::ptrdiff_t>(i) * stride, 1, node});
      }
      node = make_node(std::move(blocks));
      fastest = false;
      const auto start = scaled(call, array_of_starts[d], stride);
      if (node == nullptr || !start || __builtin_add_overflow(offset, *start, &offset) ||
          __builtin_mul_overflow(stride, static_cast<std::ptrdiff_t>(array_of_sizes[d]), &stride)) {
        call.fail(MPI_ERR_COUNT, "the array's size in bytes does not fit 64 bits");
        return;
      }
    }
    node = make_node({{offset, 1, node}});
    if (node != nullptr) node = make_resized(node, 0, stride);  // stride is now the whole array
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_SUBARRAY;
    envelope->integers.push_back(ndims);
    Recorder record(*envelope, large);
    for (const S* array : {array_of_sizes, array_of_subsizes, array_of_starts}) record.integers(array, ndims);
    envelope->integers.push_back(order);
    envelope->types.push_back(old->as_part());
    add_new_type(call, std::move(node), std::move(envelope), newtype);
  });
}

// A distributed array's local part (MPI-3.1 section 4.1.4): per dimension the global indices this
// process owns, as runs (start, length) in increasing order, each dimension's runs of the faster
// dimensions' type; every level resized to its dimension's whole length, so the type's extent is the
// whole array and its elements come in the local array's order. Global sizes are int, or MPI_Count for
// MPI_Type_create_darray_c.
template <typename S>
int type_darray(std::string_view name, bool large, int size, int rank, int ndims, const S array_of_gsizes[],
                const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order,
                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return api_call(name, [&](Call& call) {
    if (ndims < 1 || size < 1 || rank < 0 || rank >= size) {
      call.fail(MPI_ERR_ARG, fmt::format("ndims {}, size {}, rank {}: need ndims >= 1 and 0 <= rank < size", ndims, size, rank));
      return;
    }
    if (!check_arg(call, array_of_gsizes, "array_of_gsizes") || !check_arg(call, array_of_distribs, "array_of_distribs") ||
        !check_arg(call, array_of_dargs, "array_of_dargs") || !check_arg(call, array_of_psizes, "array_of_psizes") ||
        !check_arg(call, newtype, "newtype")) {
      return;
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
      call.fail(MPI_ERR_ARG, fmt::format("order {} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order));
      return;
    }
    long processes = 1;
    for (int d = 0; d < ndims; ++d) {
      const MPI_Count g = array_of_gsizes[d];
      const int p = array_of_psizes[d], dist = array_of_distribs[d], arg = array_of_dargs[d];
      if (g < 1 || p < 1) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: gsize {}, psize {} (both must be positive)", d, g, p));
        return;
      }
      if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC && dist != MPI_DISTRIBUTE_NONE) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: distribution {} is not BLOCK, CYCLIC or NONE", d, dist));
        return;
      }
      if (arg != MPI_DISTRIBUTE_DFLT_DARG && arg < 1) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: darg {} (positive or MPI_DISTRIBUTE_DFLT_DARG)", d, arg));
        return;
      }
      if (dist == MPI_DISTRIBUTE_NONE && p != 1) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: MPI_DISTRIBUTE_NONE over {} processes (must be 1)", d, p));
        return;
      }
      if (dist == MPI_DISTRIBUTE_BLOCK && arg != MPI_DISTRIBUTE_DFLT_DARG && static_cast<MPI_Count>(arg) * p < g) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: blocks of {} over {} processes do not cover {}", d, arg, p, g));
        return;
      }
      if (processes <= size) processes *= p;  // beyond size it is wrong anyway, and must not overflow
    }
    if (processes != size) {
      call.fail(MPI_ERR_ARG, fmt::format("the process grid has {} processes, not size {}", processes, size));
      return;
    }
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr) return;
    // This process's coordinates: the grid is in row-major order whatever `order` says.
    std::vector<int> coords(static_cast<std::size_t>(ndims));
    for (int d = ndims - 1, r = rank; d >= 0; --d) {
      coords[static_cast<std::size_t>(d)] = r % array_of_psizes[d];
      r /= array_of_psizes[d];
    }
    std::shared_ptr<const TypeNode> node = old->node;
    std::ptrdiff_t stride = old->extent();
    for (int k = 0; k < ndims; ++k) {
      const int d = order == MPI_ORDER_C ? ndims - 1 - k : k;  // the fastest dimension first
      const MPI_Count g = array_of_gsizes[d];
      const int p = array_of_psizes[d], c = coords[static_cast<std::size_t>(d)];
      const int dist = array_of_distribs[d], arg = array_of_dargs[d];
      std::vector<BlockSpec> blocks;
      bool fits = true;
      const auto run = [&](MPI_Count start, MPI_Count length) {
        std::ptrdiff_t at = 0;
        fits = fits && !__builtin_mul_overflow(start, stride, &at);
        if (length > 0 && fits) blocks.push_back({at, static_cast<std::size_t>(length), node});
      };
      if (dist == MPI_DISTRIBUTE_NONE) {
        run(0, g);
      } else if (dist == MPI_DISTRIBUTE_BLOCK) {
        const MPI_Count b = arg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : arg;
        const MPI_Count start = c * b;
        run(start, std::min<MPI_Count>(b, g - start));
      } else {
        const MPI_Count b = arg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : arg;
        if (!check_blocks(call, g / (b * p) + 1)) return;
        for (MPI_Count start = c * b; start < g; start += b * p) run(start, std::min<MPI_Count>(b, g - start));
      }
      if (blocks.empty()) blocks.push_back({0, 0, node});  // owns nothing in this dimension
      std::ptrdiff_t whole = 0;
      node = make_node(std::move(blocks));
      if (!fits || node == nullptr || __builtin_mul_overflow(stride, static_cast<std::ptrdiff_t>(g), &whole)) {
        call.fail(MPI_ERR_COUNT, "the array's size in bytes does not fit 64 bits");
        return;
      }
      node = make_resized(node, 0, whole);
      stride = whole;
    }
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_DARRAY;
    envelope->integers = {size, rank, ndims};
    Recorder record(*envelope, large);
    record.integers(array_of_gsizes, ndims);
    for (const int* array : {array_of_distribs, array_of_dargs, array_of_psizes}) {
      envelope->integers.insert(envelope->integers.end(), array, array + ndims);
    }
    envelope->integers.push_back(order);
    envelope->types.push_back(old->as_part());
    add_new_type(call, std::move(node), std::move(envelope), newtype);
  });
}

}  // namespace
}  // namespace ftmpi::mpi

extern "C" {

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_subarray("MPI_Type_create_subarray", false, ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                       order, oldtype, newtype);
}
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return type_subarray("MPI_Type_create_subarray_c", true, ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                       order, oldtype, newtype);
}
#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  return type_darray("MPI_Type_create_darray", false, size, rank, ndims, array_of_gsizes, array_of_distribs,
                     array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                              int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return type_darray("MPI_Type_create_darray_c", true, size, rank, ndims, array_of_gsizes, array_of_distribs,
                     array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c

}  // extern "C"

namespace ftmpi::mpi {
namespace {

const char* large_count_refusal = "was made by a large-count (_c) constructor: its arguments come back from "
                                  "MPI_Type_get_envelope_c / MPI_Type_get_contents_c";

// MPI_Type_get_envelope (int numbers, no large counts) and MPI_Type_get_envelope_c (MPI_Count numbers).
template <typename N>
int type_get_envelope(std::string_view name, MPI_Datatype datatype, N* num_integers, N* num_addresses,
                      N* num_large_counts, N* num_datatypes, int* combiner) noexcept {
  constexpr bool large = std::is_same_v<N, MPI_Count>;
  return api_call(name, [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, num_integers, "num_integers") || !check_arg(call, num_addresses, "num_addresses") ||
        (large && !check_arg(call, num_large_counts, "num_large_counts")) ||
        !check_arg(call, num_datatypes, "num_datatypes") || !check_arg(call, combiner, "combiner")) {
      return;
    }
    const Envelope named;
    const Envelope& e = type->envelope != nullptr ? *type->envelope : named;
    if (!large && !e.large_counts.empty()) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} {}", type->name.empty() ? "the type" : type->name, large_count_refusal));
      return;
    }
    if (large) *num_large_counts = static_cast<N>(e.large_counts.size());
    *num_integers = static_cast<N>(e.integers.size());
    *num_addresses = static_cast<N>(e.addresses.size());
    *num_datatypes = static_cast<N>(e.types.size());
    *combiner = e.combiner;
  });
}

// The arguments of the constructor. The types it was made of come back as their predefined handles, or
// as new derived types (uncommitted; the program frees them), each with its own envelope. `large`:
// MPI_Type_get_contents_c, which also gives the large counts; the classic call refuses a type that has them.
template <typename N>
int type_get_contents(std::string_view name, bool large, MPI_Datatype datatype, N max_integers, N max_addresses,
                      N max_large_counts, N max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                      MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) noexcept {
  return api_call(name, [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr) return;
    if (type->envelope == nullptr) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} is predefined (MPI_COMBINER_NAMED): it has no contents", type->name.empty() ? fmt::format("{:#x}", datatype) : type->name));
      return;
    }
    const std::shared_ptr<const Envelope> e = type->envelope;  // kept: adding types below may move the table's slots
    if (!large && !e->large_counts.empty()) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} {}", type->name.empty() ? "the type" : type->name, large_count_refusal));
      return;
    }
    const auto fits = [&](N max, std::size_t n, const void* array, std::string_view what) {
      if (max < 0 || static_cast<std::size_t>(max) < n) {
        call.fail(MPI_ERR_ARG, fmt::format("max_{} is {}, the constructor had {}", what, max, n));
        return false;
      }
      return n == 0 || check_arg(call, array, fmt::format("array_of_{}", what));
    };
    if (!fits(max_integers, e->integers.size(), array_of_integers, "integers") ||
        !fits(max_addresses, e->addresses.size(), array_of_addresses, "addresses") ||
        (large && !fits(max_large_counts, e->large_counts.size(), array_of_large_counts, "large_counts")) ||
        !fits(max_datatypes, e->types.size(), array_of_datatypes, "datatypes")) {
      return;
    }
    std::copy(e->integers.begin(), e->integers.end(), array_of_integers);
    std::copy(e->addresses.begin(), e->addresses.end(), array_of_addresses);
    std::copy(e->large_counts.begin(), e->large_counts.end(), array_of_large_counts);
    for (std::size_t i = 0; i < e->types.size(); ++i) {
      const Envelope::Part& part = e->types[i];
      // Predefined handles (MPI_Type_create_f90_* ones too) come back as themselves.
      array_of_datatypes[i] = part.predefined != MPI_DATATYPE_NULL ? part.predefined : add_datatype(part.node, part.envelope);
    }
  });
}

}  // namespace
}  // namespace ftmpi::mpi

extern "C" {

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
  return type_get_envelope<int>("MPI_Type_get_envelope", datatype, num_integers, num_addresses, nullptr,
                                num_datatypes, combiner);
}
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses,
                             MPI_Count* num_large_counts, MPI_Count* num_datatypes, int* combiner) {
  return type_get_envelope<MPI_Count>("MPI_Type_get_envelope_c", datatype, num_integers, num_addresses,
                                      num_large_counts, num_datatypes, combiner);
}
#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  return type_get_contents<int>("MPI_Type_get_contents", false, datatype, max_integers, max_addresses, 0,
                                max_datatypes, array_of_integers, array_of_addresses, nullptr, array_of_datatypes);
}
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[]) {
  return type_get_contents<MPI_Count>("MPI_Type_get_contents_c", true, datatype, max_integers, max_addresses,
                                      max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                                      array_of_large_counts, array_of_datatypes);
}
#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c

int PMPI_Type_commit(MPI_Datatype* datatype) {
  return api_call("MPI_Type_commit", [&](Call& call) {
    if (!check_arg(call, datatype, "datatype")) return;
    Datatype* type = find_datatype(*datatype);
    if (check_datatype(call, *datatype) == nullptr || type->committed) return;
    const std::size_t bytes = flattened_bytes(type->node->max_pieces);
    if (bytes > physical_memory() / 2) {
      call.fail(MPI_ERR_NO_MEM, fmt::format("flattening the type into its up to {} pieces would take {} bytes, more "
                                            "than half of this machine's memory", type->node->max_pieces, bytes));
      return;
    }
    type->layout = type->node->flatten();
    type->committed = true;
  });
}
#pragma weak MPI_Type_commit = PMPI_Type_commit

// Requests and collectives in flight hold the layout, and types made from this one hold its node.
int PMPI_Type_free(MPI_Datatype* datatype) {
  return api_call("MPI_Type_free", [&](Call& call) {
    if (!check_arg(call, datatype, "datatype")) return;
    const Datatype* type = check_datatype(call, *datatype);
    if (type == nullptr) return;
    if (type->predefined) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} is predefined and cannot be freed", type->name));
      return;
    }
    if (!delete_type_attributes(call, *datatype)) return;
    runtime().datatypes.remove(*datatype);
    *datatype = MPI_DATATYPE_NULL;
  });
}
#pragma weak MPI_Type_free = PMPI_Type_free

}  // extern "C"

namespace {

// MPI_Type_get_extent and MPI_Type_get_true_extent, as MPI_Aint (the plain calls) or MPI_Count (_x, _c).
template <typename T>
int extent_call(std::string_view name, MPI_Datatype datatype, T* lb, T* extent, bool true_extent) noexcept {
  return api_call(name, [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, lb, true_extent ? "true_lb" : "lb") ||
        !check_arg(call, extent, true_extent ? "true_extent" : "extent")) {
      return;
    }
    const TypeNode& node = *type->node;
    *lb = static_cast<T>(true_extent ? node.true_lb : node.lb);
    *extent = static_cast<T>(true_extent ? node.true_ub - node.true_lb : node.extent());
  });
}

int size_count_call(std::string_view name, MPI_Datatype datatype, MPI_Count* size) noexcept {
  return api_call(name, [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type != nullptr && check_arg(call, size, "size")) *size = static_cast<MPI_Count>(type->size());
  });
}

}  // namespace

extern "C" {

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return extent_call("MPI_Type_get_extent", datatype, lb, extent, false);
}
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return extent_call("MPI_Type_get_extent_x", datatype, lb, extent, false);
}
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return extent_call("MPI_Type_get_extent_c", datatype, lb, extent, false);
}
#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return extent_call("MPI_Type_get_true_extent", datatype, true_lb, true_extent, true);
}
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return extent_call("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true);
}
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return extent_call("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, true);
}
#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) { return size_count_call("MPI_Type_size_x", datatype, size); }
#pragma weak MPI_Type_size_x = PMPI_Type_size_x

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) { return size_count_call("MPI_Type_size_c", datatype, size); }
#pragma weak MPI_Type_size_c = PMPI_Type_size_c

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  return api_call("MPI_Type_get_name", [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, type_name, "type_name") || !check_arg(call, resultlen, "resultlen")) return;
    copy_name(type->name, type_name, resultlen);
  });
}
#pragma weak MPI_Type_get_name = PMPI_Type_get_name

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  return api_call("MPI_Type_set_name", [&](Call& call) {
    Datatype* type = find_datatype(datatype);
    if (check_datatype(call, datatype) == nullptr || !check_arg(call, type_name, "type_name")) return;
    type->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
#pragma weak MPI_Type_set_name = PMPI_Type_set_name

}  // extern "C"

namespace ftmpi::mpi {
namespace {

// The packed bytes of `count` items (native, or external32's), or MPI_ERR_COUNT when they overflow.
std::optional<std::size_t> packed_size(Call& call, const Datatype& type, MPI_Count count, bool external) {
  const std::size_t each = external ? external32::size_of(*type.node, 1) : type.size();
  std::size_t bytes = 0;
  if (!__builtin_mul_overflow(items(count), each, &bytes) && bytes <= static_cast<std::size_t>(PTRDIFF_MAX)) return bytes;
  call.fail(MPI_ERR_COUNT, fmt::format("{} items of {} bytes do not fit 64 bits", count, each));
  return std::nullopt;
}

// Whether `bytes` fit at *position in a buffer of `size` bytes (MPI_ERR_TRUNCATE when not).
bool check_room(Call& call, std::size_t bytes, MPI_Count position, MPI_Count size, const char* what) {
  if (position >= 0 && size >= 0 && position <= size && bytes <= static_cast<std::size_t>(size - position)) return true;
  call.fail(MPI_ERR_TRUNCATE, fmt::format("{} {} at position {} of a {}-byte buffer", bytes, what, position, size));
  return false;
}

// MPI_Pack_external and its kin: "external32" only (external32.hpp).
bool check_datarep(Call& call, const char* datarep) {
  if (!check_arg(call, datarep, "datarep")) return false;
  if (std::string_view(datarep) == "external32") return true;
  call.fail(MPI_ERR_UNSUPPORTED_DATAREP,
            fmt::format("data representation \"{}\" is not supported (\"external32\" is)", datarep));
  return false;
}

// MPI_Pack and MPI_Pack_external (`external`: datarep, no communicator), with P the position's type: int or MPI_Aint for
// the classic calls, MPI_Count for the _c ones.
template <typename P>
int pack_call(std::string_view name, bool external, const char* datarep, const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
              void* outbuf, MPI_Count outsize, P* position, MPI_Comm comm) noexcept {
  return api_call(name, [&](Call& call) {
    if (external ? !check_datarep(call, datarep) : check_comm(call, comm) == nullptr) return;
    if (!check_count(call, incount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, inbuf, incount, *type, "inbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const auto bytes = packed_size(call, *type, incount, external);
    if (!bytes || !check_room(call, *bytes, *position, outsize, external ? "external32 bytes do not fit" : "bytes do not fit")) {
      return;
    }
    if (*bytes != 0 && !check_arg(call, outbuf, "outbuf")) return;
    std::byte* to = offset_by(outbuf, static_cast<std::ptrdiff_t>(*position));
    if (external) {
      const external32::Problem problem = external32::pack(*type->node, inbuf, items(incount), to);
      if (!problem.empty()) {
        call.fail(MPI_ERR_CONVERSION, problem);
        return;
      }
    } else {
      type->layout->pack(inbuf, items(incount), to);
    }
    *position += static_cast<P>(*bytes);  // fits: at most outsize, a P
  });
}

template <typename P>
int unpack_call(std::string_view name, bool external, const char* datarep, const void* inbuf, MPI_Count insize, P* position,
                void* outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) noexcept {
  return api_call(name, [&](Call& call) {
    if (external ? !check_datarep(call, datarep) : check_comm(call, comm) == nullptr) return;
    if (!check_count(call, outcount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, outbuf, outcount, *type, "outbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const auto bytes = packed_size(call, *type, outcount, external);
    if (!bytes || !check_room(call, *bytes, *position, insize, external ? "external32 bytes are not there" : "bytes are not there")) {
      return;
    }
    if (*bytes != 0 && !check_arg(call, inbuf, "inbuf")) return;
    const std::byte* from = offset_by(inbuf, static_cast<std::ptrdiff_t>(*position));
    if (external) {
      const external32::Problem problem = external32::unpack(*type->node, from, items(outcount), outbuf);
      if (!problem.empty()) {
        call.fail(MPI_ERR_CONVERSION, problem);
        return;
      }
    } else {
      type->layout->unpack(from, *bytes, outbuf);
    }
    *position += static_cast<P>(*bytes);
  });
}

// MPI_Pack_size and MPI_Pack_external_size; S: int, MPI_Aint or MPI_Count. A size
// S cannot hold is MPI_ERR_COUNT.
template <typename S>
int pack_size_call(std::string_view name, bool external, const char* datarep, MPI_Count incount, MPI_Datatype datatype,
                   MPI_Comm comm, S* size) noexcept {
  return api_call(name, [&](Call& call) {
    if (external ? !check_datarep(call, datarep) : check_comm(call, comm) == nullptr) return;
    if (!check_count(call, incount)) return;
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, size, "size")) return;
    const auto bytes = packed_size(call, *type, incount, external);
    if (!bytes) return;
    if (*bytes > static_cast<std::size_t>(std::numeric_limits<S>::max())) {
      call.fail(MPI_ERR_COUNT, fmt::format("{} packed bytes do not fit the size argument", *bytes));
      return;
    }
    *size = static_cast<S>(*bytes);
  });
}

}  // namespace
}  // namespace ftmpi::mpi

extern "C" {

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
  return pack_call("MPI_Pack", false, nullptr, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
#pragma weak MPI_Pack = PMPI_Pack

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                MPI_Count* position, MPI_Comm comm) {
  return pack_call("MPI_Pack_c", false, nullptr, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
#pragma weak MPI_Pack_c = PMPI_Pack_c

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm) {
  return unpack_call("MPI_Unpack", false, nullptr, inbuf, insize, position, outbuf, outcount, datatype, comm);
}
#pragma weak MPI_Unpack = PMPI_Unpack

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
  return unpack_call("MPI_Unpack_c", false, nullptr, inbuf, insize, position, outbuf, outcount, datatype, comm);
}
#pragma weak MPI_Unpack_c = PMPI_Unpack_c

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return pack_size_call("MPI_Pack_size", false, nullptr, incount, datatype, comm, size);
}
#pragma weak MPI_Pack_size = PMPI_Pack_size

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  return pack_size_call("MPI_Pack_size_c", false, nullptr, incount, datatype, comm, size);
}
#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
  return pack_call("MPI_Pack_external", true, datarep, inbuf, incount, datatype, outbuf, outsize, position,
                   MPI_COMM_NULL);
}
#pragma weak MPI_Pack_external = PMPI_Pack_external

int PMPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void* outbuf, MPI_Count outsize, MPI_Count* position) {
  return pack_call("MPI_Pack_external_c", true, datarep, inbuf, incount, datatype, outbuf, outsize, position,
                   MPI_COMM_NULL);
}
#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  return unpack_call("MPI_Unpack_external", true, datarep, inbuf, insize, position, outbuf, outcount, datatype,
                     MPI_COMM_NULL);
}
#pragma weak MPI_Unpack_external = PMPI_Unpack_external

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position,
                           void* outbuf, MPI_Count outcount, MPI_Datatype datatype) {
  return unpack_call("MPI_Unpack_external_c", true, datarep, inbuf, insize, position, outbuf, outcount, datatype,
                     MPI_COMM_NULL);
}
#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  return pack_size_call("MPI_Pack_external_size", true, datarep, incount, datatype, MPI_COMM_NULL, size);
}
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count* size) {
  return pack_size_call("MPI_Pack_external_size_c", true, datarep, incount, datatype, MPI_COMM_NULL, size);
}
#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c

}  // extern "C"

namespace ftmpi::mpi {
namespace {

// The Fortran type of a class and size in bytes (MPI_Type_match_size), or MPI_DATATYPE_NULL.
int fortran_type_of(int typeclass, int size) noexcept {
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
      return size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4 : size == 8 ? MPI_INTEGER8
                                                                                                    : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_REAL: return size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_COMPLEX: return size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : MPI_DATATYPE_NULL;
    default: return MPI_DATATYPE_NULL;
  }
}

// MPI_Type_create_f90_integer/_real/_complex (MPI-3.1 section 17.1.9): the type of the smallest kind
// with at least `p` decimal digits and an exponent range (or, for integers, a range) of `r` (either
// may be MPI_UNDEFINED for reals), as a predefined type of its own that MPI_Type_get_envelope
// reports as MPI_COMBINER_F90_* with p and r. One handle per (combiner, p, r), kept for the job.
int f90_call(std::string_view name, int combiner, int p, int r, MPI_Datatype* newtype) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_arg(call, newtype, "newtype")) return;
    int match = MPI_DATATYPE_NULL;
    const bool any_p = p == MPI_UNDEFINED, any_r = r == MPI_UNDEFINED;
    if (combiner == MPI_COMBINER_F90_INTEGER) {
      match = any_r ? MPI_DATATYPE_NULL : r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4
                                      : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    } else if (!(any_p && any_r)) {
      const bool complex = combiner == MPI_COMBINER_F90_COMPLEX;
      if ((any_p || p <= 6) && (any_r || r <= 37)) {
        match = complex ? MPI_COMPLEX8 : MPI_REAL4;
      } else if ((any_p || p <= 15) && (any_r || r <= 307)) {
        match = complex ? MPI_COMPLEX16 : MPI_REAL8;
      }
    }
    if (match == MPI_DATATYPE_NULL) {
      call.fail(MPI_ERR_ARG, combiner == MPI_COMBINER_F90_INTEGER
                                 ? fmt::format("no integer kind has a range of {} decimal digits", r)
                                 : fmt::format("no {} kind has precision {} and range {}",
                                               combiner == MPI_COMBINER_F90_REAL ? "real" : "complex", p, r));
      return;
    }
    static std::map<std::tuple<int, int, int>, int> made;
    const auto key = std::make_tuple(combiner, p, r);
    if (const auto found = made.find(key); found != made.end()) {
      *newtype = found->second;
      return;
    }
    const Datatype* base = find_datatype(match);
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = combiner;
    envelope->integers = combiner == MPI_COMBINER_F90_INTEGER ? std::vector<int>{r} : std::vector<int>{p, r};
    const std::string type_name = base->name;
    const std::shared_ptr<const TypeNode> node = base->node;
    const std::shared_ptr<const Layout> layout = base->layout;
    const int handle = add_datatype(node, std::move(envelope));
    Datatype* type = find_datatype(handle);
    type->predefined = true;  // cannot be freed
    type->committed = true;
    type->layout = layout;
    type->name = type_name;
    made.emplace(key, handle);
    *newtype = handle;
  });
}

}  // namespace
}  // namespace ftmpi::mpi

extern "C" {

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  return api_call("MPI_Type_match_size", [&](Call& call) {
    if (!check_arg(call, datatype, "datatype")) return;
    const int match = fortran_type_of(typeclass, size);
    if (match == MPI_DATATYPE_NULL) {
      call.fail(MPI_ERR_ARG, fmt::format("no type of class {} has {} bytes", typeclass, size));
      return;
    }
    *datatype = match;
  });
}
#pragma weak MPI_Type_match_size = PMPI_Type_match_size

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype);
}
#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}
#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}
#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  return api_call("MPI_Get_address", [&](Call& call) {
    if (check_arg(call, address, "address")) *address = reinterpret_cast<MPI_Aint>(location);
  });
}
#pragma weak MPI_Get_address = PMPI_Get_address

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(disp));
}
#pragma weak MPI_Aint_add = PMPI_Aint_add

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) - static_cast<std::uintptr_t>(addr2));
}
#pragma weak MPI_Aint_diff = PMPI_Aint_diff

}  // extern "C"
