// Derived datatypes: the constructors (each a list of blocks, datatype.hpp), commit (which flattens),
// free, the queries, names, MPI_Pack/MPI_Unpack and addresses.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
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

bool check_lengths(Call& call, const int* lengths, int count) {
  if (count > 0 && !check_arg(call, lengths, "array_of_blocklengths")) return false;
  for (int i = 0; i < count; ++i) {
    if (lengths[i] < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("array_of_blocklengths[{}] is negative ({})", i, lengths[i]));
      return false;
    }
  }
  return true;
}

// The common frame of the constructors: checks the count, the old type and where the new one goes,
// then `blocks` lists the new type's blocks and fills in the envelope's arguments.
template <typename Blocks>
int construct(std::string_view name, int combiner, int count, MPI_Datatype oldtype, MPI_Datatype* newtype,
              Blocks&& blocks) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_count(call, count) || !check_arg(call, newtype, "newtype")) return;
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr) return;
    std::vector<BlockSpec> list;
    list.reserve(static_cast<std::size_t>(count));
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = combiner;
    envelope->types.push_back(old->as_part());
    if (!blocks(call, *old, list, *envelope)) return;
    *newtype = add_datatype(make_node(std::move(list)), std::move(envelope));
  });
}

std::size_t items(int count) noexcept { return static_cast<std::size_t>(count); }

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
  return construct("MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, count, oldtype, newtype,
                   [&](Call&, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     list.push_back({0, items(count), old.node});
                     envelope.integers = {count};
                     return true;
                   });
}
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_vector", MPI_COMBINER_VECTOR, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, &blocklength, 1)) return false;
                     for (int i = 0; i < count; ++i) {
                       list.push_back({static_cast<std::ptrdiff_t>(i) * stride * old.extent(), items(blocklength),
                                       old.node});
                     }
                     envelope.integers = {count, blocklength, stride};
                     return true;
                   });
}
#pragma weak MPI_Type_vector = PMPI_Type_vector

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, &blocklength, 1)) return false;
                     for (int i = 0; i < count; ++i) {
                       list.push_back({static_cast<std::ptrdiff_t>(i) * stride, items(blocklength), old.node});
                     }
                     envelope.integers = {count, blocklength};
                     envelope.addresses = {stride};
                     return true;
                   });
}
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector

int PMPI_Type_indexed(int count, const int* array_of_blocklengths, const int* array_of_displacements,
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, array_of_blocklengths, count)) return false;
                     if (count > 0 && !check_arg(call, array_of_displacements, "array_of_displacements")) return false;
                     for (int i = 0; i < count; ++i) {
                       list.push_back({static_cast<std::ptrdiff_t>(array_of_displacements[i]) * old.extent(),
                                       items(array_of_blocklengths[i]), old.node});
                     }
                     envelope.integers.push_back(count);
                     envelope.integers.insert(envelope.integers.end(), array_of_blocklengths, array_of_blocklengths + count);
                     envelope.integers.insert(envelope.integers.end(), array_of_displacements, array_of_displacements + count);
                     return true;
                   });
}
#pragma weak MPI_Type_indexed = PMPI_Type_indexed

int PMPI_Type_create_hindexed(int count, const int* array_of_blocklengths, const MPI_Aint* array_of_displacements,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, array_of_blocklengths, count)) return false;
                     if (count > 0 && !check_arg(call, array_of_displacements, "array_of_displacements")) return false;
                     for (int i = 0; i < count; ++i) {
                       list.push_back({array_of_displacements[i], items(array_of_blocklengths[i]), old.node});
                     }
                     envelope.integers.push_back(count);
                     envelope.integers.insert(envelope.integers.end(), array_of_blocklengths, array_of_blocklengths + count);
                     envelope.addresses.assign(array_of_displacements, array_of_displacements + count);
                     return true;
                   });
}
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed

int PMPI_Type_create_indexed_block(int count, int blocklength, const int* array_of_displacements,
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, &blocklength, 1)) return false;
                     if (count > 0 && !check_arg(call, array_of_displacements, "array_of_displacements")) return false;
                     for (int i = 0; i < count; ++i) {
                       list.push_back({static_cast<std::ptrdiff_t>(array_of_displacements[i]) * old.extent(),
                                       items(blocklength), old.node});
                     }
                     envelope.integers = {count, blocklength};
                     envelope.integers.insert(envelope.integers.end(), array_of_displacements, array_of_displacements + count);
                     return true;
                   });
}
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint* array_of_displacements,
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, oldtype, newtype,
                   [&](Call& call, const Datatype& old, std::vector<BlockSpec>& list, Envelope& envelope) {
                     if (!check_lengths(call, &blocklength, 1)) return false;
                     if (count > 0 && !check_arg(call, array_of_displacements, "array_of_displacements")) return false;
                     for (int i = 0; i < count; ++i) list.push_back({array_of_displacements[i], items(blocklength), old.node});
                     envelope.integers = {count, blocklength};
                     envelope.addresses.assign(array_of_displacements, array_of_displacements + count);
                     return true;
                   });
}
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block

int PMPI_Type_create_struct(int count, const int* array_of_blocklengths, const MPI_Aint* array_of_displacements,
                            const MPI_Datatype* array_of_types, MPI_Datatype* newtype) {
  return api_call("MPI_Type_create_struct", [&](Call& call) {
    if (!check_count(call, count) || !check_arg(call, newtype, "newtype") ||
        !check_lengths(call, array_of_blocklengths, count)) {
      return;
    }
    if (count > 0 && (!check_arg(call, array_of_displacements, "array_of_displacements") ||
                      !check_arg(call, array_of_types, "array_of_types"))) {
      return;
    }
    std::vector<BlockSpec> list;
    list.reserve(items(count));
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_STRUCT;
    envelope->integers.push_back(count);
    envelope->integers.insert(envelope->integers.end(), array_of_blocklengths, array_of_blocklengths + count);
    envelope->addresses.assign(array_of_displacements, array_of_displacements + count);
    for (int i = 0; i < count; ++i) {
      const Datatype* type = check_datatype(call, array_of_types[i]);
      if (type == nullptr) return;
      list.push_back({array_of_displacements[i], items(array_of_blocklengths[i]), type->node});
      envelope->types.push_back(type->as_part());
    }
    *newtype = add_datatype(make_node(std::move(list)), std::move(envelope));
  });
}
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  return api_call("MPI_Type_create_resized", [&](Call& call) {
    const Datatype* old = check_datatype(call, oldtype);
    if (old == nullptr || !check_arg(call, newtype, "newtype")) return;
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_RESIZED;
    envelope->addresses = {lb, extent};
    envelope->types.push_back(old->as_part());
    *newtype = add_datatype(make_resized(old->node, lb, extent), std::move(envelope));
  });
}
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized

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
      Call cleanup(call.name());
      delete_type_attributes(cleanup, handle);
      runtime().datatypes.remove(handle);
      *newtype = MPI_DATATYPE_NULL;
      return;
    }
    *newtype = handle;
  });
}
#pragma weak MPI_Type_dup = PMPI_Type_dup

// A subarray of an ndims-dimensional array (MPI-3.1 section 4.1.3), made of the blocks the other
// constructors make: the fastest dimension a contiguous run of subsizes items, each slower one that
// many of the faster at the array's stride, the whole placed at the start's offset, then resized to the
// full array (lb 0, extent the array's), so that consecutive items are consecutive arrays.
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return api_call("MPI_Type_create_subarray", [&](Call& call) {
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
      const int size = array_of_sizes[d], subsize = array_of_subsizes[d], start = array_of_starts[d];
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
    const std::ptrdiff_t extent = old->extent();
    std::shared_ptr<const TypeNode> node = old->node;
    std::ptrdiff_t stride = extent, offset = 0;  // the current dimension's stride in bytes; the start's offset
    bool fastest = true;
    for (const int d : dims) {
      std::vector<BlockSpec> blocks;
      const auto subsize = static_cast<std::size_t>(array_of_subsizes[d]);
      if (fastest) {
        blocks.push_back({0, subsize, node});  // the fastest dimension: a contiguous run
      } else {
        for (std::size_t i = 0; i < subsize; ++i) blocks.push_back({static_cast<std::ptrdiff_t>(i) * stride, 1, node});
      }
      node = make_node(std::move(blocks));
      fastest = false;
      offset += static_cast<std::ptrdiff_t>(array_of_starts[d]) * stride;
      stride *= array_of_sizes[d];
    }
    node = make_resized(make_node({{offset, 1, node}}), 0, stride);  // stride is now the whole array
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_SUBARRAY;
    envelope->integers.push_back(ndims);
    for (const int* array : {array_of_sizes, array_of_subsizes, array_of_starts}) {
      envelope->integers.insert(envelope->integers.end(), array, array + ndims);
    }
    envelope->integers.push_back(order);
    envelope->types.push_back(old->as_part());
    *newtype = add_datatype(std::move(node), std::move(envelope));
  });
}
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray

// A distributed array's local part (MPI-3.1 section 4.1.4): per dimension the global indices this
// process owns, as runs (start, length) in increasing order, each dimension's runs of the faster
// dimensions' type; every level resized to its dimension's whole length, so the type's extent is the
// whole array and its elements come in the local array's order.
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  return api_call("MPI_Type_create_darray", [&](Call& call) {
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
      const int g = array_of_gsizes[d], p = array_of_psizes[d], dist = array_of_distribs[d], arg = array_of_dargs[d];
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
      if (dist == MPI_DISTRIBUTE_BLOCK && arg != MPI_DISTRIBUTE_DFLT_DARG && static_cast<long>(arg) * p < g) {
        call.fail(MPI_ERR_ARG, fmt::format("dimension {}: blocks of {} over {} processes do not cover {}", d, arg, p, g));
        return;
      }
      processes *= p;
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
      const int g = array_of_gsizes[d], p = array_of_psizes[d], c = coords[static_cast<std::size_t>(d)];
      const int dist = array_of_distribs[d], arg = array_of_dargs[d];
      std::vector<BlockSpec> blocks;
      const auto run = [&](long start, long length) {
        if (length > 0) blocks.push_back({static_cast<std::ptrdiff_t>(start) * stride, static_cast<std::size_t>(length), node});
      };
      if (dist == MPI_DISTRIBUTE_NONE) {
        run(0, g);
      } else if (dist == MPI_DISTRIBUTE_BLOCK) {
        const long b = arg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : arg;
        const long start = c * b;
        run(start, std::min<long>(b, g - start));
      } else {
        const long b = arg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : arg;
        for (long start = c * b; start < g; start += b * p) run(start, std::min<long>(b, g - start));
      }
      if (blocks.empty()) blocks.push_back({0, 0, node});  // owns nothing in this dimension
      node = make_resized(make_node(std::move(blocks)), 0, stride * g);
      stride *= g;
    }
    auto envelope = std::make_shared<Envelope>();
    envelope->combiner = MPI_COMBINER_DARRAY;
    envelope->integers = {size, rank, ndims};
    for (const int* array : {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes}) {
      envelope->integers.insert(envelope->integers.end(), array, array + ndims);
    }
    envelope->integers.push_back(order);
    envelope->types.push_back(old->as_part());
    *newtype = add_datatype(std::move(node), std::move(envelope));
  });
}
#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
  return api_call("MPI_Type_get_envelope", [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, num_integers, "num_integers") || !check_arg(call, num_addresses, "num_addresses") ||
        !check_arg(call, num_datatypes, "num_datatypes") || !check_arg(call, combiner, "combiner")) {
      return;
    }
    const Envelope named;
    const Envelope& e = type->envelope != nullptr ? *type->envelope : named;
    *num_integers = static_cast<int>(e.integers.size());
    *num_addresses = static_cast<int>(e.addresses.size());
    *num_datatypes = static_cast<int>(e.types.size());
    *combiner = e.combiner;
  });
}
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope

// The arguments of the constructor. The types it was made of come back as their predefined handles, or
// as new derived types (uncommitted; the program frees them), each with its own envelope.
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  return api_call("MPI_Type_get_contents", [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr) return;
    if (type->envelope == nullptr) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} is predefined (MPI_COMBINER_NAMED): it has no contents", type->name.empty() ? fmt::format("{:#x}", datatype) : type->name));
      return;
    }
    const std::shared_ptr<const Envelope> e = type->envelope;  // kept: adding types below may move the table's slots
    const auto fits = [&](int max, std::size_t n, const void* array, std::string_view what) {
      if (max < 0 || static_cast<std::size_t>(max) < n) {
        call.fail(MPI_ERR_ARG, fmt::format("max_{} is {}, the constructor had {}", what, max, n));
        return false;
      }
      return n == 0 || check_arg(call, array, fmt::format("array_of_{}", what));
    };
    if (!fits(max_integers, e->integers.size(), array_of_integers, "integers") ||
        !fits(max_addresses, e->addresses.size(), array_of_addresses, "addresses") ||
        !fits(max_datatypes, e->types.size(), array_of_datatypes, "datatypes")) {
      return;
    }
    std::copy(e->integers.begin(), e->integers.end(), array_of_integers);
    std::copy(e->addresses.begin(), e->addresses.end(), array_of_addresses);
    for (std::size_t i = 0; i < e->types.size(); ++i) {
      const Envelope::Part& part = e->types[i];
      array_of_datatypes[i] = part.envelope == nullptr ? part.predefined : add_datatype(part.node, part.envelope);
    }
  });
}
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents

int PMPI_Type_commit(MPI_Datatype* datatype) {
  return api_call("MPI_Type_commit", [&](Call& call) {
    if (!check_arg(call, datatype, "datatype")) return;
    Datatype* type = find_datatype(*datatype);
    if (check_datatype(call, *datatype) == nullptr || type->committed) return;
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

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
  return api_call("MPI_Pack", [&](Call& call) {
    if (check_comm(call, comm) == nullptr || !check_count(call, incount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, inbuf, incount, *type, "inbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const std::size_t bytes = type->layout->packed_bytes(items(incount));
    if (*position < 0 || outsize < 0 || *position > outsize ||
        bytes > static_cast<std::size_t>(outsize - *position)) {
      call.fail(MPI_ERR_TRUNCATE, fmt::format("{} bytes do not fit at position {} of a {}-byte buffer", bytes,
                                              *position, outsize));
      return;
    }
    if (bytes != 0 && !check_arg(call, outbuf, "outbuf")) return;
    type->layout->pack(inbuf, items(incount), offset_by(outbuf, *position));
    *position += static_cast<int>(bytes);
  });
}
#pragma weak MPI_Pack = PMPI_Pack

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm) {
  return api_call("MPI_Unpack", [&](Call& call) {
    if (check_comm(call, comm) == nullptr || !check_count(call, outcount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, outbuf, outcount, *type, "outbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const std::size_t bytes = type->layout->packed_bytes(items(outcount));
    if (*position < 0 || insize < 0 || *position > insize ||
        bytes > static_cast<std::size_t>(insize - *position)) {
      call.fail(MPI_ERR_TRUNCATE, fmt::format("{} bytes are not there at position {} of a {}-byte buffer", bytes,
                                              *position, insize));
      return;
    }
    if (bytes != 0 && !check_arg(call, inbuf, "inbuf")) return;
    type->layout->unpack(offset_by(inbuf, *position), bytes, outbuf);
    *position += static_cast<int>(bytes);
  });
}
#pragma weak MPI_Unpack = PMPI_Unpack

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return api_call("MPI_Pack_size", [&](Call& call) {
    if (check_comm(call, comm) == nullptr || !check_count(call, incount)) return;
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, size, "size")) return;
    const std::size_t bytes = items(incount) * type->size();
    if (bytes > INT_MAX) {
      call.fail(MPI_ERR_COUNT, fmt::format("{} packed bytes do not fit an int", bytes));
      return;
    }
    *size = static_cast<int>(bytes);
  });
}
#pragma weak MPI_Pack_size = PMPI_Pack_size

// MPI_Pack_external and its kin: "external32" only (external32.hpp).
static bool check_datarep(Call& call, const char* datarep) {
  if (!check_arg(call, datarep, "datarep")) return false;
  if (std::string_view(datarep) == "external32") return true;
  call.fail(MPI_ERR_UNSUPPORTED_DATAREP,
            fmt::format("data representation \"{}\" is not supported (\"external32\" is)", datarep));
  return false;
}

// Whether `bytes` fit at *position in a buffer of `size` bytes (MPI_ERR_TRUNCATE when not).
static bool check_room(Call& call, std::size_t bytes, MPI_Aint position, MPI_Aint size, const char* verb) {
  if (position >= 0 && size >= 0 && position <= size && bytes <= static_cast<std::size_t>(size - position)) return true;
  call.fail(MPI_ERR_TRUNCATE, fmt::format("{} external32 bytes {} at position {} of a {}-byte buffer", bytes, verb,
                                          position, size));
  return false;
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
  return api_call("MPI_Pack_external", [&](Call& call) {
    if (!check_datarep(call, datarep) || !check_count(call, incount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, inbuf, incount, *type, "inbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const std::size_t bytes = external32::size_of(*type->node, items(incount));
    if (!check_room(call, bytes, *position, outsize, "do not fit")) return;
    if (bytes != 0 && !check_arg(call, outbuf, "outbuf")) return;
    const external32::Problem problem =
        external32::pack(*type->node, inbuf, items(incount), offset_by(outbuf, *position));
    if (!problem.empty()) {
      call.fail(MPI_ERR_CONVERSION, problem);
      return;
    }
    *position += static_cast<MPI_Aint>(bytes);
  });
}
#pragma weak MPI_Pack_external = PMPI_Pack_external

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  return api_call("MPI_Unpack_external", [&](Call& call) {
    if (!check_datarep(call, datarep) || !check_count(call, outcount)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_buffer(call, outbuf, outcount, *type, "outbuf") ||
        !check_arg(call, position, "position")) {
      return;
    }
    const std::size_t bytes = external32::size_of(*type->node, items(outcount));
    if (!check_room(call, bytes, *position, insize, "are not there")) return;
    if (bytes != 0 && !check_arg(call, inbuf, "inbuf")) return;
    const external32::Problem problem =
        external32::unpack(*type->node, offset_by(inbuf, *position), items(outcount), outbuf);
    if (!problem.empty()) {
      call.fail(MPI_ERR_CONVERSION, problem);
      return;
    }
    *position += static_cast<MPI_Aint>(bytes);
  });
}
#pragma weak MPI_Unpack_external = PMPI_Unpack_external

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  return api_call("MPI_Pack_external_size", [&](Call& call) {
    if (!check_datarep(call, datarep) || !check_count(call, incount)) return;
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr || !check_arg(call, size, "size")) return;
    *size = static_cast<MPI_Aint>(external32::size_of(*type->node, items(incount)));
  });
}
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size

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
