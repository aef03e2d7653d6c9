// MPI-IO's machinery (file.hpp): errno to error class, views, independent and two-phase collective
// access, the shared file pointer, byte-range locks.
#include "mpi/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/external32.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

FileTable& files() {
  static FileTable table;
  return table;
}

MPI_Errhandler& default_file_errhandler() {
  static MPI_Errhandler handler = MPI_ERRORS_RETURN;  // MPI-3.1 section 13.7
  return handler;
}

int io_error_class(int error) noexcept {
  switch (error) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
  }
}

namespace {

constexpr std::int64_t kSieveBytes = std::int64_t{4} << 20;  // one independent pread spans at most this

void fail_errno(Call& call, int error, const std::string& path, std::string_view doing = {}) {
  call.fail(io_error_class(error), doing.empty() ? fmt::format("{}: {}", path, std::strerror(error))
                                                 : fmt::format("{}: {}: {}", path, doing, std::strerror(error)));
}

bool write_fully(Call& call, File& file, const std::byte* data, std::int64_t length, std::int64_t offset) {
  while (length > 0) {
    const ssize_t n = ::pwrite(file.fd, data, static_cast<std::size_t>(length), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(call, errno, file.path, "write");
      return false;
    }
    ++file.stats.write_calls;
    file.stats.write_bytes += static_cast<std::uint64_t>(n);
    file.stats.largest_write = std::max<std::uint64_t>(file.stats.largest_write, static_cast<std::uint64_t>(n));
    data += n;
    length -= n;
    offset += n;
  }
  return true;
}

// Bytes read: fewer than `length` only at the end of file; -1 after failing the call.
std::int64_t read_fully(Call& call, File& file, std::byte* data, std::int64_t length, std::int64_t offset) {
  std::int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(file.fd, data + done, static_cast<std::size_t>(length - done), offset + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(call, errno, file.path, "read");
      return -1;
    }
    ++file.stats.read_calls;
    file.stats.read_bytes += static_cast<std::uint64_t>(n);
    if (n == 0) break;
    done += n;
  }
  return done;
}

bool file_size(Call& call, const File& file, std::int64_t& size) {
  struct stat st{};
  if (::fstat(file.fd, &st) != 0) {
    fail_errno(call, errno, file.path, "fstat");
    return false;
  }
  size = st.st_size;
  return true;
}

// The memory side of an access as packed bytes: the user's buffer when the type is dense.
struct Packed {
  std::vector<std::byte> staged;
  std::byte* data = nullptr;
};

// The external32 representation (MPI-3.1 section 13.5.2) is taken for types whose external32 size is
// their size on this host: then the file's layout is the native one and only each element's bytes
// differ (big-endian), so views, offsets and the two-phase exchanges work on converted bytes unchanged.
bool external(const File& file) { return file.view.datarep == "external32"; }

bool external_size_is_native(const Datatype& type) { return external32::size_of(*type.node, 1) == type.size(); }

bool check_external(Call& call, const Datatype& type, std::string_view role) {
  if (external_size_is_native(type)) return true;
  call.fail(MPI_ERR_UNSUPPORTED_DATAREP,
            fmt::format("the {} {} is {} bytes in external32 and {} here; ftmpi takes external32 for types of "
                        "the same size in both (MPI_LONG is 4 bytes in external32, MPI_LONG_DOUBLE 16)",
                        role, type.name.empty() ? std::string("datatype") : type.name,
                        external32::size_of(*type.node, 1), type.size()));
  return false;
}

Packed pack_for_write(Call& call, const File& file, const void* buf, MPI_Count count, const Datatype& type) {
  Packed p;
  const std::size_t bytes = static_cast<std::size_t>(count) * type.size();
  if (external(file) && bytes != 0) {
    if (!check_external(call, type, "memory type")) return p;
    p.staged.resize(bytes);
    const external32::Problem problem = external32::pack(*type.node, buf, static_cast<std::size_t>(count),
                                                         p.staged.data());
    if (!problem.empty()) call.fail(MPI_ERR_CONVERSION, problem);
    p.data = p.staged.data();
  } else if (type.dense() || bytes == 0) {
    p.data = static_cast<std::byte*>(const_cast<void*>(buf));
  } else {
    p.staged.resize(bytes);
    type.layout->pack(buf, static_cast<std::size_t>(count), p.staged.data());
    p.data = p.staged.data();
  }
  return p;
}

Packed space_for_read(Call& call, const File& file, void* buf, MPI_Count count, const Datatype& type) {
  Packed p;
  const std::size_t bytes = static_cast<std::size_t>(count) * type.size();
  if (external(file) && bytes != 0 && !check_external(call, type, "memory type")) return p;
  if ((type.dense() && !external(file)) || bytes == 0) {
    p.data = static_cast<std::byte*>(buf);
  } else {
    p.staged.resize(bytes);
    p.data = p.staged.data();
  }
  return p;
}

// External32: whole items only (a read cut short by the end of the file inside an item leaves that
// item as it was).
void unpack_read(Call& call, const File& file, Packed& p, void* buf, std::int64_t bytes, const Datatype& type) {
  if (p.staged.empty() || bytes <= 0) return;
  if (!external(file)) {
    type.layout->unpack(p.staged.data(), static_cast<std::size_t>(bytes), buf);
    return;
  }
  const std::size_t items = static_cast<std::size_t>(bytes) / type.size();
  const external32::Problem problem = external32::unpack(*type.node, p.staged.data(), items, buf);
  if (!problem.empty()) call.fail(MPI_ERR_CONVERSION, problem);
}

// Atomic mode holds a lock over the whole range an access spans.
class RangeLock {
 public:
  RangeLock(Call& call, File& file, const std::vector<Segment>& segments, bool exclusive) {
    if (!file.atomic || segments.empty()) return;
    offset_ = segments.front().offset;
    length_ = segments.back().offset + segments.back().length - offset_;
    if (lock_range(call, file.fd, offset_, length_, exclusive, file.path)) fd_ = file.fd;
  }
  ~RangeLock() {
    if (fd_ >= 0) unlock_range(fd_, offset_, length_);
  }
  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;

 private:
  int fd_ = -1;
  std::int64_t offset_ = 0;
  std::int64_t length_ = 0;
};

}  // namespace

bool comm_ok(Call& call, int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return true;
  const int cls = is_error_class(rc) ? rc : MPI_ERR_OTHER;
  call.fail(cls, fmt::format("{} among the file's ranks failed ({})", what, error_class_name(cls)));
  return false;
}

bool lock_range(Call& call, int fd, std::int64_t offset, std::int64_t length, bool exclusive,
                const std::string& path) {
  struct flock lock{};
  lock.l_type = exclusive ? F_WRLCK : F_RDLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = offset;
  lock.l_len = length;
  while (::fcntl(fd, F_SETLKW, &lock) != 0) {
    if (errno == EINTR) continue;
    fail_errno(call, errno, path, "byte-range lock (fcntl)");
    return false;
  }
  return true;
}

void unlock_range(int fd, std::int64_t offset, std::int64_t length) noexcept {
  struct flock lock{};
  lock.l_type = F_UNLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = offset;
  lock.l_len = length;
  ::fcntl(fd, F_SETLK, &lock);
}

// ---- Views ----

bool set_view(Call& call, File& file, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
              const char* datarep) {
  const Datatype* e = check_committed(call, etype);
  const Datatype* t = e == nullptr ? nullptr : check_committed(call, filetype);
  if (t == nullptr || !check_arg(call, datarep, "datarep")) return false;
  const std::string_view rep(datarep);
  if (rep != "native" && rep != "internal" && rep != "external32") {
    call.fail(MPI_ERR_UNSUPPORTED_DATAREP,
              fmt::format("unknown data representation \"{}\" (\"native\", \"internal\" or \"external32\")", rep));
    return false;
  }
  if (rep == "external32" && (!check_external(call, *e, "etype") || !check_external(call, *t, "filetype"))) {
    return false;
  }
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    if ((file.amode & MPI_MODE_SEQUENTIAL) == 0) {
      call.fail(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT is only for files opened with MPI_MODE_SEQUENTIAL");
      return false;
    }
    MPI_Offset current = 0;
    if (!shared_pointer(call, file, 0, current)) return false;
    disp = view_byte_offset(file.view, current * static_cast<MPI_Offset>(file.view.etype_size));
  } else if (disp < 0) {
    call.fail(MPI_ERR_ARG, fmt::format("negative displacement {}", disp));
    return false;
  }
  if (e->size() == 0) {
    call.fail(MPI_ERR_TYPE, "the etype has size 0");
    return false;
  }
  if (t->size() == 0 || t->size() % e->size() != 0) {
    call.fail(MPI_ERR_TYPE, fmt::format("the filetype's size {} is not a positive multiple of the etype's size {}",
                                        t->size(), e->size()));
    return false;
  }
  const Layout& layout = *t->layout;
  // MPI-3.1 section 13.3: the filetype's displacements are non-negative and monotonically nondecreasing,
  // so tiles never overlap. ftmpi also keeps every tile's data within [0, extent) of its origin.
  std::int64_t end = 0;
  for (const Piece& p : layout.pieces) {
    if (p.displacement < end) {
      call.fail(MPI_ERR_TYPE, fmt::format("the filetype's displacements are negative or decrease (a piece at {} "
                                          "after data up to {}); MPI requires them nondecreasing",
                                          p.displacement, end));
      return false;
    }
    end = p.displacement + static_cast<std::int64_t>(p.length);
  }
  if (end > layout.extent) {
    call.fail(MPI_ERR_TYPE, fmt::format("the filetype's data reaches byte {}, past its extent {}: its tiles would "
                                        "overlap", end, layout.extent));
    return false;
  }
  // Our own duplicates of derived types, for MPI_File_get_view.
  auto keep = [&](MPI_Datatype handle, const Datatype* type, MPI_Datatype& kept) {
    if (type->predefined) {
      kept = handle;
      return true;
    }
    return comm_ok(call, PMPI_Type_dup(handle, &kept), "MPI_Type_dup");
  };
  MPI_Datatype kept_etype = MPI_DATATYPE_NULL;
  MPI_Datatype kept_filetype = MPI_DATATYPE_NULL;
  if (!keep(etype, e, kept_etype) || !keep(filetype, t, kept_filetype)) return false;
  for (MPI_Datatype* old : {&file.view.etype, &file.view.filetype}) {
    const Datatype* type = find_datatype(*old);
    if (type != nullptr && !type->predefined) PMPI_Type_free(old);
  }
  file.view.disp = disp;
  file.view.etype = kept_etype;
  file.view.filetype = kept_filetype;
  file.view.etype_size = e->size();
  const bool contiguous = layout.pieces.size() == 1 && layout.pieces[0].displacement == 0 &&
                          static_cast<std::ptrdiff_t>(layout.size) == layout.extent;
  file.view.layout = contiguous ? nullptr : t->layout;
  file.view.datarep = std::string(rep);
  return true;
}

std::vector<Segment> view_segments(const FileView& view, std::int64_t start, std::int64_t bytes) {
  std::vector<Segment> out;
  auto add = [&out](std::int64_t offset, std::int64_t length) {
    if (!out.empty() && out.back().offset + out.back().length == offset) {
      out.back().length += length;
    } else {
      out.push_back({offset, length});
    }
  };
  if (bytes <= 0) return out;
  if (!view.layout) {
    add(view.disp + start, bytes);
    return out;
  }
  const Layout& layout = *view.layout;
  const auto size = static_cast<std::int64_t>(layout.size);
  std::int64_t item = start / size;
  std::int64_t within = start % size;
  auto it = std::upper_bound(layout.starts.begin(), layout.starts.end(), static_cast<std::uint64_t>(within));
  std::size_t i = static_cast<std::size_t>(it - layout.starts.begin()) - 1;
  while (bytes > 0) {
    const Piece& p = layout.pieces[i];
    const std::int64_t into = within - static_cast<std::int64_t>(layout.starts[i]);
    const std::int64_t take = std::min(static_cast<std::int64_t>(p.length) - into, bytes);
    add(view.disp + item * layout.extent + p.displacement + into, take);
    bytes -= take;
    within += take;
    if (++i == layout.pieces.size()) {
      i = 0;
      ++item;
      within = 0;
    }
  }
  return out;
}

std::int64_t view_bytes_below(const FileView& view, std::int64_t end) {
  if (end <= view.disp) return 0;
  const std::int64_t span = end - view.disp;
  if (!view.layout) return span;
  const Layout& layout = *view.layout;
  const std::int64_t tiles = span / layout.extent;
  const std::int64_t rest = span % layout.extent;
  std::int64_t bytes = tiles * static_cast<std::int64_t>(layout.size);
  for (const Piece& p : layout.pieces) {
    if (p.displacement >= rest) break;
    bytes += std::min<std::int64_t>(static_cast<std::int64_t>(p.length), rest - p.displacement);
  }
  return bytes;
}

std::int64_t view_byte_offset(const FileView& view, std::int64_t start) {
  if (!view.layout) return view.disp + start;
  // The first byte of data at or after `start`, which view_segments finds for one byte.
  return view_segments(view, start, 1).front().offset;
}

// ---- Independent access ----

MPI_Count write_independent(Call& call, File& file, std::int64_t start, const void* buf, MPI_Count count,
                            const Datatype& type) {
  const std::int64_t bytes = count * static_cast<std::int64_t>(type.size());
  if (bytes == 0) return 0;
  Packed packed = pack_for_write(call, file, buf, count, type);
  if (call.failed()) return 0;
  const std::vector<Segment> segments = view_segments(file.view, start, bytes);
  const RangeLock lock(call, file, segments, true);
  if (call.failed()) return 0;
  std::int64_t at = 0;
  for (const Segment& s : segments) {
    if (!write_fully(call, file, packed.data + at, s.length, s.offset)) return 0;
    at += s.length;
  }
  return bytes;
}

MPI_Count read_independent(Call& call, File& file, std::int64_t start, void* buf, MPI_Count count,
                           const Datatype& type) {
  const std::int64_t bytes = count * static_cast<std::int64_t>(type.size());
  if (bytes == 0) return 0;
  Packed packed = space_for_read(call, file, buf, count, type);
  if (call.failed()) return 0;
  const std::vector<Segment> segments = view_segments(file.view, start, bytes);
  const RangeLock lock(call, file, segments, false);
  if (call.failed()) return 0;
  std::int64_t at = 0;  // packed bytes filled
  std::vector<std::byte> sieve;
  for (std::size_t first = 0; first < segments.size();) {
    // Segments close together share one pread (the holes between them are read and dropped).
    std::size_t last = first;
    const std::int64_t span_start = segments[first].offset;
    while (last + 1 < segments.size() &&
           segments[last + 1].offset + segments[last + 1].length - span_start <= kSieveBytes) {
      ++last;
    }
    const std::int64_t span_end = segments[last].offset + segments[last].length;
    std::int64_t got = 0;
    if (first == last) {
      got = read_fully(call, file, packed.data + at, segments[first].length, span_start);
      if (got < 0) return 0;
      at += got;
      if (got < segments[first].length) break;  // the end of file
    } else {
      sieve.resize(static_cast<std::size_t>(span_end - span_start));
      got = read_fully(call, file, sieve.data(), span_end - span_start, span_start);
      if (got < 0) return 0;
      bool ended = false;
      for (std::size_t i = first; i <= last && !ended; ++i) {
        const std::int64_t from = segments[i].offset - span_start;
        const std::int64_t have = std::clamp<std::int64_t>(got - from, 0, segments[i].length);
        if (have > 0) std::memcpy(packed.data + at, sieve.data() + from, static_cast<std::size_t>(have));
        at += have;
        ended = have < segments[i].length;
      }
      if (ended) break;
    }
    first = last + 1;
  }
  unpack_read(call, file, packed, buf, at, type);
  return call.failed() ? 0 : at;
}

// ---- Two-phase collective access ----

namespace {

struct Plan {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t domain = 0;     // bytes of file per aggregator
  std::int64_t window = 0;     // bytes per aggregator per round
  std::int64_t rounds = 0;
  std::vector<int> aggregators;  // ranks
};

// Agrees on the range every rank accesses (and on whether every rank's arguments were good): one
// allreduce. False when the call failed here or on another rank, or nothing is accessed anywhere.
bool agree(Call& call, File& file, const std::vector<Segment>& segments, Plan& plan) {
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  std::int64_t mine[3] = {segments.empty() ? -kNone : -segments.front().offset,
                          segments.empty() ? 0 : segments.back().offset + segments.back().length,
                          call.failed() ? 1 : 0};
  std::int64_t all[3] = {0, 0, 0};
  if (!comm_ok(call, PMPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MAX, file.comm), "MPI_Allreduce")) return false;
  if (all[2] != 0) {
    call.fail(MPI_ERR_ARG, "another rank of the file's communicator could not start this collective call");
    return false;
  }
  plan.lo = -all[0];
  plan.hi = all[1];
  if (plan.hi <= plan.lo) return false;
  plan.aggregators = file.aggregators;
  if (file.hints.cb_nodes > 0 && static_cast<std::size_t>(file.hints.cb_nodes) < plan.aggregators.size()) {
    std::vector<int> chosen;
    const std::size_t n = plan.aggregators.size();
    const auto want = static_cast<std::size_t>(file.hints.cb_nodes);
    for (std::size_t i = 0; i < want; ++i) chosen.push_back(plan.aggregators[i * n / want]);
    plan.aggregators = std::move(chosen);
  }
  const auto count = static_cast<std::int64_t>(plan.aggregators.size());
  plan.domain = (plan.hi - plan.lo + count - 1) / count;
  plan.window = std::min<std::int64_t>(static_cast<std::int64_t>(file.hints.cb_buffer_size), plan.domain);
  plan.rounds = (plan.domain + plan.window - 1) / plan.window;
  return true;
}

// The pieces of this rank's segments that fall in each aggregator's window of one round, walked with
// one cursor per aggregator (segments and windows both ascend).
struct Cursor {
  std::size_t segment = 0;
};

struct Outgoing {
  std::vector<Segment> pieces;
  std::vector<std::int64_t> packed_at;  // where each piece's data is in the rank's packed buffer
};

void collect(const Plan& plan, std::size_t a, std::int64_t round, const std::vector<Segment>& segments,
             const std::vector<std::int64_t>& packed_starts, Cursor& cursor, Outgoing& out) {
  out.pieces.clear();
  out.packed_at.clear();
  const std::int64_t domain_start = plan.lo + static_cast<std::int64_t>(a) * plan.domain;
  const std::int64_t domain_end = std::min(plan.hi, domain_start + plan.domain);
  const std::int64_t lo = domain_start + round * plan.window;
  const std::int64_t hi = std::min(domain_end, lo + plan.window);
  if (lo >= hi) return;
  std::size_t i = cursor.segment;
  while (i < segments.size() && segments[i].offset < hi) {
    const Segment& s = segments[i];
    const std::int64_t from = std::max(s.offset, lo);
    const std::int64_t to = std::min(s.offset + s.length, hi);
    if (from < to) {
      out.pieces.push_back({from, to - from});
      out.packed_at.push_back(packed_starts[i] + (from - s.offset));
    }
    if (s.offset + s.length <= hi) {
      ++i;
    } else {
      break;
    }
  }
  cursor.segment = i;
}

std::vector<std::int64_t> packed_starts_of(const std::vector<Segment>& segments) {
  std::vector<std::int64_t> starts(segments.size());
  std::int64_t at = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    starts[i] = at;
    at += segments[i].length;
  }
  return starts;
}

void put_i64(std::vector<std::byte>& buffer, std::int64_t value) {
  const std::size_t at = buffer.size();
  buffer.resize(at + sizeof value);
  std::memcpy(buffer.data() + at, &value, sizeof value);
}

std::int64_t get_i64(const std::byte* from) {
  std::int64_t value = 0;
  std::memcpy(&value, from, sizeof value);
  return value;
}

// Everyone learns the worst outcome; the ranks that did not fail report the class another rank hit.
void agree_outcome(Call& call, File& file, std::string_view doing) {
  const int mine = call.failed() ? 1 : 0;
  int any = 0;
  if (!comm_ok(call, PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, file.comm), "MPI_Allreduce")) return;
  if (any != 0 && !call.failed()) {
    call.fail(MPI_ERR_IO, fmt::format("{}: an aggregator's {} failed (its rank reports why)", file.path, doing));
  }
}

struct Exchange {
  std::vector<std::byte> send;
  std::vector<MPI_Count> send_counts;
  std::vector<MPI_Aint> send_displs;
  std::vector<std::byte> recv;
  std::vector<MPI_Count> recv_counts;
  std::vector<MPI_Aint> recv_displs;

  explicit Exchange(int ranks)
      : send_counts(static_cast<std::size_t>(ranks)), send_displs(static_cast<std::size_t>(ranks)),
        recv_counts(static_cast<std::size_t>(ranks)), recv_displs(static_cast<std::size_t>(ranks)) {}

  // With send and send_counts filled (blocks in rank order): learns the sizes coming in, then moves them.
  bool run(Call& call, MPI_Comm comm, bool sizes_known) {
    MPI_Aint at = 0;
    for (std::size_t r = 0; r < send_counts.size(); ++r) {
      send_displs[r] = at;
      at += send_counts[r];
    }
    if (!sizes_known &&
        !comm_ok(call, PMPI_Alltoall(send_counts.data(), 1, MPI_COUNT, recv_counts.data(), 1, MPI_COUNT, comm),
                 "MPI_Alltoall")) {
      return false;
    }
    at = 0;
    for (std::size_t r = 0; r < recv_counts.size(); ++r) {
      recv_displs[r] = at;
      at += recv_counts[r];
    }
    recv.resize(static_cast<std::size_t>(at));
    return comm_ok(call, PMPI_Alltoallv_c(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(),
                                          recv_counts.data(), recv_displs.data(), MPI_BYTE, comm),
                   "MPI_Alltoallv_c");
  }
};

}  // namespace

MPI_Count write_collective(Call& call, File& file, std::int64_t start, const void* buf, MPI_Count count,
                           const Datatype& type) {
  Packed packed = call.failed() ? Packed{} : pack_for_write(call, file, buf, count, type);
  const std::int64_t bytes = call.failed() ? 0 : count * static_cast<std::int64_t>(type.size());
  const std::vector<Segment> segments = view_segments(file.view, start, bytes);
  Plan plan;
  if (!agree(call, file, segments, plan)) return 0;
  if (!file.hints.cb_write) {
    write_independent(call, file, start, buf, count, type);
    return call.failed() ? 0 : bytes;
  }
  const std::vector<std::int64_t> packed_starts = packed_starts_of(segments);
  std::vector<Cursor> cursors(plan.aggregators.size());
  std::vector<std::byte> window;
  std::vector<Segment> covered;
  Outgoing out;
  bool write_failed = false;
  for (std::int64_t round = 0; round < plan.rounds; ++round) {
    Exchange x(file.size);
    for (std::size_t a = 0; a < plan.aggregators.size(); ++a) {
      collect(plan, a, round, segments, packed_starts, cursors[a], out);
      if (out.pieces.empty()) continue;
      const std::size_t block_start = x.send.size();
      put_i64(x.send, static_cast<std::int64_t>(out.pieces.size()));
      for (const Segment& p : out.pieces) {
        put_i64(x.send, p.offset);
        put_i64(x.send, p.length);
      }
      for (std::size_t i = 0; i < out.pieces.size(); ++i) {
        const std::size_t at = x.send.size();
        x.send.resize(at + static_cast<std::size_t>(out.pieces[i].length));
        std::memcpy(x.send.data() + at, packed.data + out.packed_at[i], static_cast<std::size_t>(out.pieces[i].length));
      }
      x.send_counts[static_cast<std::size_t>(plan.aggregators[a])] =
          static_cast<MPI_Count>(x.send.size() - block_start);
    }
    if (!x.run(call, file.comm, false)) return 0;
    // As an aggregator: lay the pieces into the window in rank order (a later rank's bytes win where
    // pieces overlap, one of the orders MPI allows) and write each covered run at once.
    covered.clear();
    std::int64_t window_lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t window_hi = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t r = 0; r < x.recv_counts.size(); ++r) {
        if (x.recv_counts[r] == 0) continue;
        const std::byte* block = x.recv.data() + x.recv_displs[r];
        const std::int64_t n = get_i64(block);
        const std::byte* data = block + 8 + 16 * n;
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t offset = get_i64(block + 8 + 16 * i);
          const std::int64_t length = get_i64(block + 16 + 16 * i);
          if (pass == 0) {
            window_lo = std::min(window_lo, offset);
            window_hi = std::max(window_hi, offset + length);
            covered.push_back({offset, length});
          } else {
            std::memcpy(window.data() + (offset - window_lo), data, static_cast<std::size_t>(length));
          }
          data += length;
        }
      }
      if (pass == 0) {
        if (covered.empty()) break;
        window.resize(static_cast<std::size_t>(window_hi - window_lo));
      }
    }
    if (covered.empty() || write_failed) continue;
    std::sort(covered.begin(), covered.end(), [](const Segment& x1, const Segment& x2) { return x1.offset < x2.offset; });
    std::vector<Segment> runs;
    for (const Segment& s : covered) {
      if (!runs.empty() && s.offset <= runs.back().offset + runs.back().length) {
        runs.back().length = std::max(runs.back().length, s.offset + s.length - runs.back().offset);
      } else {
        runs.push_back(s);
      }
    }
    const RangeLock lock(call, file, runs, true);
    for (const Segment& run : runs) {
      if (call.failed() || !write_fully(call, file, window.data() + (run.offset - window_lo), run.length, run.offset)) {
        write_failed = true;
        break;
      }
    }
  }
  agree_outcome(call, file, "write");
  return call.failed() ? 0 : bytes;
}

MPI_Count read_collective(Call& call, File& file, std::int64_t start, void* buf, MPI_Count count,
                          const Datatype& type) {
  std::int64_t bytes = call.failed() ? 0 : count * static_cast<std::int64_t>(type.size());
  std::int64_t eof = 0;
  if (bytes > 0 && file_size(call, file, eof)) {
    bytes = std::clamp<std::int64_t>(view_bytes_below(file.view, eof) - start, 0, bytes);  // past the end: short
  }
  Packed packed = call.failed() ? Packed{} : space_for_read(call, file, buf, count, type);
  if (call.failed()) bytes = 0;
  const std::vector<Segment> segments = view_segments(file.view, start, call.failed() ? 0 : bytes);
  Plan plan;
  if (!agree(call, file, segments, plan)) return 0;  // failed, or nothing to read anywhere
  if (!file.hints.cb_read) {
    const MPI_Count got = read_independent(call, file, start, buf, count, type);
    return call.failed() ? 0 : got;
  }
  const std::vector<std::int64_t> packed_starts = packed_starts_of(segments);
  std::vector<Cursor> cursors(plan.aggregators.size());
  std::vector<std::byte> window;
  std::vector<std::vector<Segment>> asked(static_cast<std::size_t>(file.size));
  std::vector<Outgoing> sent(plan.aggregators.size());  // what this rank asked of each aggregator
  bool read_failed = false;
  for (std::int64_t round = 0; round < plan.rounds; ++round) {
    Exchange request(file.size);
    std::vector<MPI_Count> reply_bytes(static_cast<std::size_t>(file.size));
    for (std::size_t a = 0; a < plan.aggregators.size(); ++a) {
      Outgoing& out = sent[a];
      collect(plan, a, round, segments, packed_starts, cursors[a], out);
      if (out.pieces.empty()) continue;
      const std::size_t block_start = request.send.size();
      put_i64(request.send, static_cast<std::int64_t>(out.pieces.size()));
      std::int64_t total = 0;
      for (const Segment& p : out.pieces) {
        put_i64(request.send, p.offset);
        put_i64(request.send, p.length);
        total += p.length;
      }
      const auto to = static_cast<std::size_t>(plan.aggregators[a]);
      request.send_counts[to] = static_cast<MPI_Count>(request.send.size() - block_start);
      reply_bytes[to] = total;
    }
    if (!request.run(call, file.comm, false)) return 0;
    // As an aggregator: one pread over the span the window's requests cover, then each rank's pieces back.
    std::int64_t span_lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t span_hi = 0;
    for (std::size_t r = 0; r < asked.size(); ++r) {
      asked[r].clear();
      if (request.recv_counts[r] == 0) continue;
      const std::byte* block = request.recv.data() + request.recv_displs[r];
      const std::int64_t n = get_i64(block);
      for (std::int64_t i = 0; i < n; ++i) {
        const Segment s{get_i64(block + 8 + 16 * i), get_i64(block + 16 + 16 * i)};
        span_lo = std::min(span_lo, s.offset);
        span_hi = std::max(span_hi, s.offset + s.length);
        asked[r].push_back(s);
      }
    }
    Exchange reply(file.size);
    if (span_hi > span_lo) {
      window.assign(static_cast<std::size_t>(span_hi - span_lo), std::byte{0});
      const RangeLock lock(call, file, {Segment{span_lo, span_hi - span_lo}}, false);
      if (!read_failed && !call.failed() &&
          read_fully(call, file, window.data(), span_hi - span_lo, span_lo) < 0) {
        read_failed = true;
      }
      for (std::size_t r = 0; r < asked.size(); ++r) {
        const std::size_t block_start = reply.send.size();
        for (const Segment& s : asked[r]) {
          const std::size_t at = reply.send.size();
          reply.send.resize(at + static_cast<std::size_t>(s.length));
          std::memcpy(reply.send.data() + at, window.data() + (s.offset - span_lo), static_cast<std::size_t>(s.length));
        }
        reply.send_counts[r] = static_cast<MPI_Count>(reply.send.size() - block_start);
      }
    }
    reply.recv_counts = reply_bytes;
    if (!reply.run(call, file.comm, true)) return 0;
    for (std::size_t a = 0; a < plan.aggregators.size(); ++a) {
      const auto from = static_cast<std::size_t>(plan.aggregators[a]);
      const std::byte* data = reply.recv.data() + reply.recv_displs[from];
      const Outgoing& mine = sent[a];
      for (std::size_t i = 0; i < mine.pieces.size(); ++i) {
        const auto length = static_cast<std::size_t>(mine.pieces[i].length);
        std::memcpy(packed.data + mine.packed_at[i], data, length);
        data += length;
      }
    }
  }
  agree_outcome(call, file, "read");
  if (call.failed()) return 0;
  unpack_read(call, file, packed, buf, bytes, type);
  return call.failed() ? 0 : bytes;
}

// ---- The shared file pointer ----

namespace {

// Opens the side file (creating it at first use) and holds its lock while alive.
class SharedPointerFile {
 public:
  SharedPointerFile(Call& call, const File& file) : path_(file.shared_path) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      fail_errno(call, errno, path_, "the shared file pointer's side file");
      return;
    }
    if (!lock_range(call, fd_, 0, sizeof(std::int64_t), true, path_)) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~SharedPointerFile() {
    if (fd_ < 0) return;
    unlock_range(fd_, 0, sizeof(std::int64_t));
    ::close(fd_);
  }
  SharedPointerFile(const SharedPointerFile&) = delete;
  SharedPointerFile& operator=(const SharedPointerFile&) = delete;

  bool ok() const noexcept { return fd_ >= 0; }
  bool read(Call& call, MPI_Offset initial, MPI_Offset& value) {
    std::int64_t stored = 0;
    const ssize_t n = ::pread(fd_, &stored, sizeof stored, 0);
    if (n < 0) {
      fail_errno(call, errno, path_, "reading the shared file pointer");
      return false;
    }
    value = n == static_cast<ssize_t>(sizeof stored) ? stored : initial;
    return true;
  }
  bool write(Call& call, MPI_Offset value) {
    const std::int64_t stored = value;
    if (::pwrite(fd_, &stored, sizeof stored, 0) != static_cast<ssize_t>(sizeof stored)) {
      fail_errno(call, errno, path_, "writing the shared file pointer");
      return false;
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

bool shared_pointer(Call& call, File& file, MPI_Offset delta, MPI_Offset& before) {
  SharedPointerFile side(call, file);
  if (!side.ok() || !side.read(call, file.shared_initial, before)) return false;
  return delta == 0 || side.write(call, before + delta);
}

bool set_shared_pointer(Call& call, File& file, MPI_Offset value) {
  SharedPointerFile side(call, file);
  return side.ok() && side.write(call, value);
}

std::set<MPI_File>& open_files() {
  static std::set<MPI_File> handles;
  return handles;
}

void close_files_at_finalize() noexcept {
  for (const MPI_File handle : open_files()) {
    File* file = files().find(handle);
    if (file == nullptr) continue;
    std::fprintf(stderr,
                 "ftmpi: rank %d: MPI_Finalize: file %s is still open (MPI-3.1 requires MPI_File_close before "
                 "MPI_Finalize); its descriptor is closed now, without MPI_File_close's other work\n",
                 runtime().world().rank(), file->path.c_str());
    if (file->fd >= 0) ::close(file->fd);
    files().remove(handle);
  }
  open_files().clear();
}

}  // namespace ftmpi::mpi
