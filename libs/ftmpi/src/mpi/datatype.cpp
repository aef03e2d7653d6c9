#include "mpi/datatype.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <limits>
#include <utility>

#include <unistd.h>

#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

// A pair type is the C struct {value; int index;} of MINLOC/MAXLOC (Fortran's: an index of the value's type).
template <typename T, typename I = int>
struct Pair {
  T value;
  I index;
};

template <typename T>
std::shared_ptr<const TypeNode> basic(int handle) {
  auto node = std::make_shared<TypeNode>();
  node->parts = {{0, sizeof(T)}};
  node->size = sizeof(T);
  node->ub = node->true_ub = static_cast<std::ptrdiff_t>(sizeof(T));
  node->alignment = alignof(T);
  node->elements = 1;
  node->base = handle;
  node->base_count = 1;
  node->run_element = sizeof(T);
  node->max_pieces = 1;
  return node;
}

template <typename T, typename I = int>
std::shared_ptr<const TypeNode> pair(int handle) {
  using P = Pair<T, I>;
  auto node = std::make_shared<TypeNode>();
  node->parts = {{static_cast<std::ptrdiff_t>(offsetof(P, value)), sizeof(T)},
                 {static_cast<std::ptrdiff_t>(offsetof(P, index)), sizeof(I)}};
  node->size = sizeof(T) + sizeof(I);
  node->ub = static_cast<std::ptrdiff_t>(sizeof(P));
  node->true_ub = static_cast<std::ptrdiff_t>(offsetof(P, index) + sizeof(I));
  node->alignment = alignof(P);
  node->elements = 2;
  node->base = handle;
  node->base_count = 1;
  node->max_pieces = 2;
  return node;
}

struct Predefined {
  int handle;
  const char* name;
  std::shared_ptr<const TypeNode> (*make)(int handle);
  std::optional<coll::Kind> kind;
};

template <typename T>
constexpr coll::Kind integer_kind() {
  using coll::Kind;
  if constexpr (std::numeric_limits<T>::is_signed) {
    return sizeof(T) == 1 ? Kind::int8 : sizeof(T) == 2 ? Kind::int16 : sizeof(T) == 4 ? Kind::int32 : Kind::int64;
  } else {
    return sizeof(T) == 1 ? Kind::uint8 : sizeof(T) == 2 ? Kind::uint16 : sizeof(T) == 4 ? Kind::uint32 : Kind::uint64;
  }
}

// C's _Complex types have the layout of std::complex, and C's _Bool that of bool (same ABI).
// MPI_CHAR reduces as the C integer it is (MPI-3.1 lists it as a character type, but Open MPI and
// MPICH reduce it, and programs such as the OSU Micro-Benchmarks' reductions rely on that).
// In the order of the handles in mpi.h.
const Predefined kPredefined[] = {
    {MPI_CHAR, "MPI_CHAR", basic<char>, integer_kind<char>()},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", basic<signed char>, coll::Kind::int8},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", basic<unsigned char>, coll::Kind::uint8},
    {MPI_BYTE, "MPI_BYTE", basic<unsigned char>, coll::Kind::byte},
    {MPI_WCHAR, "MPI_WCHAR", basic<wchar_t>, coll::Kind::wchar},
    {MPI_SHORT, "MPI_SHORT", basic<short>, integer_kind<short>()},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", basic<unsigned short>, integer_kind<unsigned short>()},
    {MPI_INT, "MPI_INT", basic<int>, integer_kind<int>()},
    {MPI_UNSIGNED, "MPI_UNSIGNED", basic<unsigned>, integer_kind<unsigned>()},
    {MPI_LONG, "MPI_LONG", basic<long>, integer_kind<long>()},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", basic<unsigned long>, integer_kind<unsigned long>()},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", basic<long long>, integer_kind<long long>()},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", basic<unsigned long long>,
     integer_kind<unsigned long long>()},
    {MPI_FLOAT, "MPI_FLOAT", basic<float>, coll::Kind::float32},
    {MPI_DOUBLE, "MPI_DOUBLE", basic<double>, coll::Kind::float64},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", basic<long double>, coll::Kind::long_double},
    {MPI_INT8_T, "MPI_INT8_T", basic<std::int8_t>, coll::Kind::int8},
    {MPI_INT16_T, "MPI_INT16_T", basic<std::int16_t>, coll::Kind::int16},
    {MPI_INT32_T, "MPI_INT32_T", basic<std::int32_t>, coll::Kind::int32},
    {MPI_INT64_T, "MPI_INT64_T", basic<std::int64_t>, coll::Kind::int64},
    {MPI_UINT8_T, "MPI_UINT8_T", basic<std::uint8_t>, coll::Kind::uint8},
    {MPI_UINT16_T, "MPI_UINT16_T", basic<std::uint16_t>, coll::Kind::uint16},
    {MPI_UINT32_T, "MPI_UINT32_T", basic<std::uint32_t>, coll::Kind::uint32},
    {MPI_UINT64_T, "MPI_UINT64_T", basic<std::uint64_t>, coll::Kind::uint64},
    {MPI_C_BOOL, "MPI_C_BOOL", basic<bool>, coll::Kind::c_bool},
    {MPI_C_COMPLEX, "MPI_C_COMPLEX", basic<std::complex<float>>, coll::Kind::c_float_complex},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", basic<std::complex<double>>, coll::Kind::c_double_complex},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", basic<std::complex<long double>>,
     coll::Kind::c_long_double_complex},
    {MPI_AINT, "MPI_AINT", basic<MPI_Aint>, integer_kind<MPI_Aint>()},
    {MPI_OFFSET, "MPI_OFFSET", basic<MPI_Offset>, integer_kind<MPI_Offset>()},
    {MPI_COUNT, "MPI_COUNT", basic<MPI_Count>, integer_kind<MPI_Count>()},
    {MPI_PACKED, "MPI_PACKED", basic<unsigned char>, std::nullopt},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", pair<float>, coll::Kind::float_int},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", pair<double>, coll::Kind::double_int},
    {MPI_LONG_INT, "MPI_LONG_INT", pair<long>, coll::Kind::long_int},
    {MPI_2INT, "MPI_2INT", pair<int>, coll::Kind::two_int},
    {MPI_SHORT_INT, "MPI_SHORT_INT", pair<short>, coll::Kind::short_int},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", pair<long double>, coll::Kind::long_double_int},
    // Fortran's pairs of REAL and DOUBLE PRECISION (MINLOC/MAXLOC), which no C type matches.
    {MPI_2REAL, "MPI_2REAL", pair<float, float>, coll::Kind::two_float},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", pair<double, double>, coll::Kind::two_double},
};

// Fortran's and C++'s types: handles and names of their own, each the layout, elements and reductions
// of the C type of its size (its twin, in kPredefined), so that either may receive what the other sent.
struct TwinType {
  int handle;
  const char* name;
  int twin;
};
const TwinType kTwins[] = {
    {MPI_INTEGER, "MPI_INTEGER", MPI_INT},
    {MPI_REAL, "MPI_REAL", MPI_FLOAT},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", MPI_DOUBLE},
    {MPI_LOGICAL, "MPI_LOGICAL", MPI_INT},
    {MPI_CHARACTER, "MPI_CHARACTER", MPI_CHAR},
    {MPI_COMPLEX, "MPI_COMPLEX", MPI_C_FLOAT_COMPLEX},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
    {MPI_INTEGER1, "MPI_INTEGER1", MPI_INT8_T},
    {MPI_INTEGER2, "MPI_INTEGER2", MPI_INT16_T},
    {MPI_INTEGER4, "MPI_INTEGER4", MPI_INT32_T},
    {MPI_INTEGER8, "MPI_INTEGER8", MPI_INT64_T},
    {MPI_REAL4, "MPI_REAL4", MPI_FLOAT},
    {MPI_REAL8, "MPI_REAL8", MPI_DOUBLE},
    {MPI_COMPLEX8, "MPI_COMPLEX8", MPI_C_FLOAT_COMPLEX},
    {MPI_COMPLEX16, "MPI_COMPLEX16", MPI_C_DOUBLE_COMPLEX},
    {MPI_2INTEGER, "MPI_2INTEGER", MPI_2INT},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", MPI_C_BOOL},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", MPI_C_COMPLEX},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX},
};

const Predefined* find_predefined(int handle) noexcept {
  for (const Predefined& p : kPredefined) {
    if (p.handle == handle) return &p;
  }
  return nullptr;
}

void push_piece(Layout& out, std::ptrdiff_t offset, std::size_t length) {
  if (length == 0) return;
  if (!out.pieces.empty()) {
    Piece& last = out.pieces.back();
    if (last.displacement + static_cast<std::ptrdiff_t>(last.length) == offset) {
      last.length += length;
      return;
    }
  }
  out.pieces.push_back({offset, length});
}

void push_elements(Layout& out, std::size_t size, std::size_t count) {
  if (count == 0) return;
  if (!out.elements.empty() && out.elements.back().size == size) {
    out.elements.back().count += count;
    return;
  }
  out.elements.push_back({size, count});
}

// `count` items of `node` that abut (extent == size) and are each one run: a single piece.
bool one_run(const TypeNode& node, std::size_t count) noexcept {
  return node.run_element != 0 && (count == 1 || node.extent() == static_cast<std::ptrdiff_t>(node.size));
}

void append(const TypeNode& node, std::ptrdiff_t at, Layout& out) {
  if (one_run(node, 1)) {
    push_piece(out, at, node.size);
    push_elements(out, node.run_element, node.size / node.run_element);
    return;
  }
  if (!node.parts.empty()) {
    for (const Piece& part : node.parts) {
      push_piece(out, at + part.displacement, part.length);
      push_elements(out, part.length, 1);
    }
    return;
  }
  for (const TypeNode::Block& block : node.blocks) {
    const std::ptrdiff_t extent = block.child->extent();
    if (block.count > 1 && one_run(*block.child, block.count)) {
      push_piece(out, at + block.displacement, block.count * block.child->size);
      push_elements(out, block.child->run_element, block.count * (block.child->size / block.child->run_element));
      continue;
    }
    for (std::size_t k = 0; k < block.count; ++k) {
      append(*block.child, at + block.displacement + static_cast<std::ptrdiff_t>(k) * extent, out);
    }
  }
}

}  // namespace

void add_predefined_datatypes(DatatypeTable& table) {
  const auto put = [&](int handle, const char* name, const Predefined& layout) {
    const auto index = handle_index(handle, HandleKind::datatype);
    Datatype type;
    type.handle = handle;
    type.name = name;
    type.predefined = true;
    type.committed = true;
    type.node = layout.make(handle);  // its elements are this handle's (what reductions look up)
    type.layout = type.node->flatten();
    table.put(*index, std::move(type));
  };
  for (const Predefined& p : kPredefined) put(p.handle, p.name, p);
  for (const TwinType& t : kTwins) put(t.handle, t.name, *find_predefined(t.twin));
}

namespace {

// c_twin and kind_of by a predefined handle's index: one-sided accumulates ask for every operation, and
// a scan of the tables cost about 200 instructions there.
struct PredefinedLookup {
  std::vector<int> twin;  // 0: not a twin
  std::vector<std::optional<coll::Kind>> kind;
};

const PredefinedLookup& predefined_lookup() {
  static const PredefinedLookup table = [] {
    PredefinedLookup t;
    auto slot = [&t](int handle) {
      const std::uint32_t index = *handle_index(handle, HandleKind::datatype);
      if (index >= t.twin.size()) {
        t.twin.resize(index + 1, 0);
        t.kind.resize(index + 1);
      }
      return index;
    };
    for (const Predefined& p : kPredefined) t.kind[slot(p.handle)] = p.kind;
    for (const TwinType& tw : kTwins) {
      const std::uint32_t index = slot(tw.handle);
      t.twin[index] = tw.twin;
      const Predefined* p = find_predefined(tw.twin);
      t.kind[index] = p != nullptr ? p->kind : std::nullopt;
    }
    return t;
  }();
  return table;
}

}  // namespace

int c_twin(int handle) noexcept {
  const PredefinedLookup& t = predefined_lookup();
  const auto index = handle_index(handle, HandleKind::datatype);
  return index && *index < t.twin.size() && t.twin[*index] != 0 ? t.twin[*index] : handle;
}

std::optional<coll::Kind> kind_of(int predefined_handle) noexcept {
  const PredefinedLookup& t = predefined_lookup();
  const auto index = handle_index(predefined_handle, HandleKind::datatype);
  return index && *index < t.kind.size() ? t.kind[*index] : std::nullopt;
}


int add_datatype(std::shared_ptr<const TypeNode> node, std::shared_ptr<const Envelope> envelope) {
  Datatype type;
  type.node = std::move(node);
  type.envelope = std::move(envelope);
  const int handle = runtime().datatypes.add(std::move(type));
  runtime().datatypes.find(handle)->handle = handle;
  return handle;
}

std::shared_ptr<const TypeNode> make_node(std::vector<BlockSpec> blocks) {
  auto node = std::make_shared<TypeNode>();
  bool any = false;       // a block with items: it decides the bounds
  bool any_data = false;  // a block with data: it decides the true bounds and the base type
  bool mixed = false;
  bool overflow = false;
  // The run this node is, if every block with data continues it (see TypeNode::run_element).
  std::size_t run_element = 0;
  bool is_run = true;
  std::size_t run_end = 0;
  const auto add = [&](std::size_t& to, std::size_t count, std::size_t each) {
    std::size_t product = 0;
    overflow = overflow || __builtin_mul_overflow(count, each, &product) || __builtin_add_overflow(to, product, &to);
  };
  const auto offset = [&](std::ptrdiff_t a, std::ptrdiff_t b) {
    std::ptrdiff_t sum = 0;
    overflow = overflow || __builtin_add_overflow(a, b, &sum);
    return sum;
  };
  for (const BlockSpec& b : blocks) {
    const TypeNode& c = *b.child;
    node->alignment = std::max(node->alignment, c.alignment);
    node->explicit_bounds = node->explicit_bounds || c.explicit_bounds;
    if (b.count == 0) continue;
    add(node->size, b.count, c.size);
    add(node->elements, b.count, c.elements);
    add(node->base_count, b.count, c.base_count);
    std::size_t pieces = 0;
    if (__builtin_mul_overflow(one_run(c, b.count) ? 1 : b.count, c.max_pieces, &pieces) ||
        __builtin_add_overflow(node->max_pieces, pieces, &node->max_pieces)) {
      node->max_pieces = SIZE_MAX;
    }
    std::ptrdiff_t span = 0;
    overflow = overflow || b.count - 1 > static_cast<std::size_t>(PTRDIFF_MAX) ||
               __builtin_mul_overflow(static_cast<std::ptrdiff_t>(b.count - 1), c.extent(), &span);
    const std::ptrdiff_t low = offset(b.displacement, std::min<std::ptrdiff_t>(0, span));
    const std::ptrdiff_t high = offset(b.displacement, std::max<std::ptrdiff_t>(0, span));
    if (overflow) return nullptr;
    node->lb = any ? std::min(node->lb, offset(low, c.lb)) : offset(low, c.lb);
    node->ub = any ? std::max(node->ub, offset(high, c.ub)) : offset(high, c.ub);
    any = true;
    if (c.size == 0) continue;
    is_run = is_run && one_run(c, b.count) && (run_element == 0 || run_element == c.run_element) &&
             b.displacement >= 0 && static_cast<std::size_t>(b.displacement) == run_end;
    run_element = c.run_element;
    run_end += b.count * c.size;
    if (!any_data) node->base = c.base;
    mixed = mixed || c.base != node->base;
    node->true_lb = any_data ? std::min(node->true_lb, offset(low, c.true_lb)) : offset(low, c.true_lb);
    node->true_ub = any_data ? std::max(node->true_ub, offset(high, c.true_ub)) : offset(high, c.true_ub);
    any_data = true;
  }
  std::ptrdiff_t extent = 0;
  if (overflow || __builtin_sub_overflow(node->ub, node->lb, &extent) || node->size > static_cast<std::size_t>(PTRDIFF_MAX)) {
    return nullptr;
  }
  if (is_run && any_data) {
    node->run_element = run_element;
    node->max_pieces = 1;
  }
  if (mixed || node->base == MPI_DATATYPE_NULL) {
    node->base = MPI_DATATYPE_NULL;
    node->base_count = 0;
  }
  // MPI's epsilon: the extent rounds up to the strictest alignment among the elements.
  if (!node->explicit_bounds && node->extent() > 0) {
    const auto align = static_cast<std::ptrdiff_t>(node->alignment);
    const std::ptrdiff_t rest = node->extent() % align;
    if (rest != 0 && __builtin_add_overflow(node->ub, align - rest, &node->ub)) return nullptr;
  }
  node->blocks.reserve(blocks.size());
  for (BlockSpec& b : blocks) node->blocks.push_back({b.displacement, b.count, std::move(b.child)});
  return node;
}

std::shared_ptr<const TypeNode> make_resized(std::shared_ptr<const TypeNode> child, std::ptrdiff_t lb,
                                             std::ptrdiff_t extent) {
  auto node = std::make_shared<TypeNode>();
  node->size = child->size;
  node->true_lb = child->true_lb;
  node->true_ub = child->true_ub;
  node->alignment = child->alignment;
  node->elements = child->elements;
  node->base = child->base;
  node->base_count = child->base_count;
  node->run_element = child->run_element;  // the data are the child's: only lb and extent change
  node->max_pieces = child->max_pieces;
  node->lb = lb;
  if (__builtin_add_overflow(lb, extent, &node->ub)) return nullptr;
  node->explicit_bounds = true;
  node->blocks.push_back({0, 1, std::move(child)});
  return node;
}

std::size_t flattened_bytes(std::size_t pieces) noexcept {
  // Each piece and its packed start (Layout::pieces, Layout::starts).
  std::size_t bytes = 0;
  return __builtin_mul_overflow(pieces, sizeof(Piece) + sizeof(std::uint64_t), &bytes) ? SIZE_MAX : bytes;
}

std::size_t physical_memory() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return SIZE_MAX;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::shared_ptr<const Layout> TypeNode::flatten() const {
  auto layout = std::make_shared<Layout>();
  append(*this, 0, *layout);
  layout->size = size;
  layout->extent = extent();
  layout->starts.reserve(layout->pieces.size());
  std::uint64_t start = 0;
  for (const Piece& p : layout->pieces) {
    layout->starts.push_back(start);
    start += p.length;
  }
  const std::vector<Piece>& pieces = layout->pieces;
  if (pieces.size() > 1 && pieces[0].length > 0) {
    const std::ptrdiff_t stride = pieces[1].displacement - pieces[0].displacement;
    bool regular = true;
    for (std::size_t i = 1; i < pieces.size() && regular; ++i) {
      regular = pieces[i].length == pieces[0].length && pieces[i].displacement - pieces[i - 1].displacement == stride;
    }
    if (regular) {
      layout->regular_count = pieces.size();
      layout->regular_stride = stride;
    }
  }
  layout->dense = size == 0 || (layout->pieces.size() == 1 && layout->pieces[0].displacement == 0 &&
                                layout->pieces[0].length == size && extent() == static_cast<std::ptrdiff_t>(size));
  return layout;
}

base::Result<frag::PiecesLayout> Layout::view(std::size_t count) const {
  if (regular_count > 1 && (count == 1 || extent == regular_stride * static_cast<std::ptrdiff_t>(regular_count))) {
    return frag::PiecesLayout::make(std::span<const Piece>(pieces).first(1), count * regular_count, regular_stride);
  }
  return frag::PiecesLayout::make(pieces, count, extent, starts);
}

// Addresses are computed as integers (frag::at_address): with MPI_BOTTOM the buffer is null and the offsets absolute.
void Layout::pack(const void* from, std::size_t count, std::byte* to) const noexcept {
  if (dense) {
    if (count * size != 0) std::memcpy(to, from, count * size);
    return;
  }
  // The fragmenter's walk, without a checksum. The view fits: the items exist in the caller's memory.
  auto walk = view(count);
  frag::Checksummer none(frag::ChecksumKind::none);
  if (walk) (void)frag::gather_with_checksum(*walk, from, 0, {to, count * size}, none);
}

void Layout::unpack(const std::byte* from, std::size_t bytes, void* to) const noexcept {
  if (dense) {
    if (bytes != 0) std::memcpy(to, from, bytes);
    return;
  }
  if (bytes == 0) return;
  // Any prefix of the items, possibly ending inside one.
  auto walk = view((bytes + size - 1) / size);
  frag::Checksummer none(frag::ChecksumKind::none);
  if (walk) (void)frag::scatter_with_checksum(*walk, to, 0, {from, bytes}, none);
}

std::optional<std::size_t> Layout::elements_in(std::size_t bytes) const noexcept {
  if (size == 0) return bytes == 0 ? std::optional<std::size_t>(0) : std::nullopt;
  std::size_t per_item = 0;
  for (const ElementRun& run : elements) per_item += run.count;
  std::size_t total = bytes / size * per_item;
  std::size_t rest = bytes % size;
  for (const ElementRun& run : elements) {
    if (rest == 0) break;
    if (rest >= run.size * run.count) {
      rest -= run.size * run.count;
      total += run.count;
      continue;
    }
    if (rest % run.size != 0) return std::nullopt;
    total += rest / run.size;
    rest = 0;
  }
  return total;
}

}  // namespace ftmpi::mpi
