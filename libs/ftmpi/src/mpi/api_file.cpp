// MPI-IO's C calls (MPI-3.1 chapter 13) over file.hpp: opening and closing, sizes and hints, views,
// data access at explicit offsets, through the individual and the shared file pointer, blocking,
// nonblocking, collective and split collective; atomicity, sync, and the files' error handlers.
//
// Nonblocking calls do their I/O at the call and return a request that is complete (MPI allows it);
// the nonblocking collective ones (MPI_File_iwrite_all ...) do so without aggregating, so they never
// wait for another rank and a program that communicates before waiting on them cannot deadlock.
// Split collectives run the blocking collective at _begin (MPI-3.1 section 13.4.5 allows it).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/file.hpp"
#include "mpi/p2p.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

constexpr int kAccessModes = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR;
constexpr int kAllModes = kAccessModes | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                          MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;

// What is wrong with an amode (MPI-3.1 section 13.2.1), or nothing.
std::optional<std::string> amode_problem(int amode) {
  if ((amode & ~kAllModes) != 0) return fmt::format("amode {:#x} has bits no MPI_MODE_* names", amode);
  const int access = amode & kAccessModes;
  if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR) {
    return fmt::format("amode {:#x} must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR", amode);
  }
  if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0) {
    return std::string("MPI_MODE_CREATE and MPI_MODE_EXCL cannot go with MPI_MODE_RDONLY");
  }
  if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL) != 0) {
    return std::string("MPI_MODE_SEQUENTIAL cannot go with MPI_MODE_RDWR");
  }
  return std::nullopt;
}

// The hints ftmpi acts on, from the info's entries (docs/mpi.md, "MPI-IO"); values it cannot use are
// kept and ignored, as MPI allows for hints.
void apply_hints(FileHints& hints, const Info* info) {
  if (info == nullptr) return;
  for (const auto& [key, value] : info->entries) {
    bool found = false;
    for (auto& entry : hints.entries) {
      if (entry.first == key) {
        entry.second = value;
        found = true;
      }
    }
    if (!found) hints.entries.emplace_back(key, value);
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    const bool positive = end != value.c_str() && *end == '\0' && number > 0;
    if (key == "cb_buffer_size" && positive) hints.cb_buffer_size = static_cast<std::size_t>(number);
    if (key == "cb_nodes" && positive && number <= 1 << 20) hints.cb_nodes = static_cast<int>(number);
    if (key == "romio_cb_write") hints.cb_write = value != "disable";
    if (key == "romio_cb_read") hints.cb_read = value != "disable";
  }
}

// MPI_INFO_NULL or a live info object.
bool check_info_or_null(Call& call, MPI_Info info, const Info*& found) {
  found = nullptr;
  if (info == MPI_INFO_NULL) return true;
  found = check_info(call, info);
  return found != nullptr;
}

File* check_file(Call& call, MPI_File fh) {
  call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
  File* file = files().find(fh);
  if (file == nullptr) {
    call.fail(MPI_ERR_FILE, fh == MPI_FILE_NULL ? std::string("MPI_FILE_NULL is not an open file")
                                                : fmt::format("invalid file handle {:#x}", fh));
    return nullptr;
  }
  call.raise_on_file(fh, file->errhandler);
  return file;
}

template <typename Body>
int file_call(std::string_view name, MPI_File fh, Body&& body) {
  return api_call(name, [&](Call& call) {
    if (File* file = check_file(call, fh)) body(call, *file);
  });
}

void fill_status(MPI_Status* status, MPI_Count bytes) {
  write_status(status, Outcome{.source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG, .bytes = static_cast<std::size_t>(bytes)});
}

// A request that is complete already: nonblocking file calls did their work at the call.
int complete_query(void*, MPI_Status*) { return MPI_SUCCESS; }
int complete_free(void*) { return MPI_SUCCESS; }
int complete_cancel(void*, int) { return MPI_SUCCESS; }

void post_complete(MPI_Request* request, MPI_Count bytes) {
  Transfer transfer;
  transfer.comm = find_comm(MPI_COMM_SELF);
  Request& r = runtime().requests.acquire(Mode::generalized, transfer, false);
  r.active = true;
  r.done = true;
  r.general = std::make_unique<Generalized>(Generalized{complete_query, complete_free, complete_cancel, nullptr});
  r.general->poll = [] { return true; };
  r.outcome = Outcome{.source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG, .bytes = static_cast<std::size_t>(bytes)};
  *request = &r;
}

enum class Pointer : unsigned char { explicit_offset, individual, shared };

// The checks every data access makes; the datatype, or null after failing the call.
const Datatype* check_access(Call& call, const File& file, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             bool writing, Pointer pointer, MPI_Offset offset) {
  if (writing && (file.amode & MPI_MODE_RDONLY) != 0) {
    call.fail(MPI_ERR_READ_ONLY, fmt::format("{}: opened MPI_MODE_RDONLY", file.path));
    return nullptr;
  }
  if (!writing && (file.amode & MPI_MODE_WRONLY) != 0) {
    call.fail(MPI_ERR_ACCESS, fmt::format("{}: opened MPI_MODE_WRONLY, cannot be read", file.path));
    return nullptr;
  }
  if (pointer != Pointer::shared && (file.amode & MPI_MODE_SEQUENTIAL) != 0) {
    call.fail(MPI_ERR_UNSUPPORTED_OPERATION,
              fmt::format("{}: opened MPI_MODE_SEQUENTIAL: only the shared file pointer may be used", file.path));
    return nullptr;
  }
  if (pointer == Pointer::explicit_offset && offset < 0) {
    call.fail(MPI_ERR_ARG, fmt::format("negative offset {}", offset));
    return nullptr;
  }
  if (!check_count(call, count)) return nullptr;
  const Datatype* type = check_committed(call, datatype);
  if (type == nullptr || !check_buffer(call, buf, count, *type, "buf")) return nullptr;
  const std::size_t bytes = static_cast<std::size_t>(count) * type->size();
  if (bytes % file.view.etype_size != 0) {
    call.fail(MPI_ERR_ARG, fmt::format("{} bytes are not a whole number of etypes of the view ({} bytes each)", bytes,
                                       file.view.etype_size));
    return nullptr;
  }
  return type;
}

struct FileAccess {
  Pointer pointer = Pointer::explicit_offset;
  bool writing = false;
  bool collective = false;
};

// One data access call's work; the bytes moved.
MPI_Count access(Call& call, File& file, FileAccess how, MPI_Offset offset, void* buf, MPI_Count count,
                 MPI_Datatype datatype) {
  const Datatype* type = check_access(call, file, buf, count, datatype, how.writing, how.pointer, offset);
  static const Datatype* const kByte = find_datatype(MPI_BYTE);
  const auto etype = static_cast<MPI_Offset>(file.view.etype_size);
  MPI_Offset at = 0;
  if (type != nullptr) {
    switch (how.pointer) {
      case Pointer::explicit_offset: at = offset; break;
      case Pointer::individual: at = file.position; break;
      case Pointer::shared: {
        const MPI_Offset etypes = count * static_cast<MPI_Offset>(type->size()) / etype;
        if (!shared_pointer(call, file, etypes, at)) type = nullptr;
        break;
      }
    }
  }
  MPI_Count moved = 0;
  if (how.collective) {
    // Every rank takes part, the failed ones too (they tell the others).
    const Datatype& t = type != nullptr ? *type : *kByte;
    moved = how.writing ? write_collective(call, file, at * etype, buf, type ? count : 0, t)
                        : read_collective(call, file, at * etype, buf, type ? count : 0, t);
  } else if (type != nullptr) {
    moved = how.writing ? write_independent(call, file, at * etype, buf, count, *type)
                        : read_independent(call, file, at * etype, buf, count, *type);
  }
  if (how.pointer == Pointer::individual && !call.failed()) file.position += moved / etype;
  return moved;
}

int data_call(std::string_view name, MPI_File fh, FileAccess how, MPI_Offset offset, const void* buf, MPI_Count count,
              MPI_Datatype datatype, MPI_Status* status) {
  return file_call(name, fh, [&](Call& call, File& file) {
    const MPI_Count moved = access(call, file, how, offset, const_cast<void*>(buf), count, datatype);
    fill_status(status, moved);
  });
}

// Nonblocking: the work now, independent (see the file's comment), and a complete request.
int nonblocking_call(std::string_view name, MPI_File fh, FileAccess how, MPI_Offset offset, const void* buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Request* request) {
  return file_call(name, fh, [&](Call& call, File& file) {
    if (!check_arg(call, request, "request")) return;
    how.collective = false;
    const MPI_Count moved = access(call, file, how, offset, const_cast<void*>(buf), count, datatype);
    if (call.failed()) {
      *request = MPI_REQUEST_NULL;
      return;
    }
    post_complete(request, moved);
  });
}

// MPI_File_read_ordered / write_ordered: each rank's data after that of the ranks before it, from the
// shared file pointer, which advances past all of it; the access itself is collective (two-phase).
MPI_Count ordered(Call& call, File& file, bool writing, void* buf, MPI_Count count, MPI_Datatype datatype) {
  const Datatype* type = check_access(call, file, buf, count, datatype, writing, Pointer::shared, 0);
  const auto etype = static_cast<MPI_Offset>(file.view.etype_size);
  const MPI_Offset mine = type != nullptr ? count * static_cast<MPI_Offset>(type->size()) / etype : 0;
  MPI_Offset before = 0;
  MPI_Offset total = 0;
  if (!comm_ok(call, PMPI_Exscan(&mine, &before, 1, MPI_OFFSET, MPI_SUM, file.comm), "MPI_Exscan") ||
      !comm_ok(call, PMPI_Allreduce(&mine, &total, 1, MPI_OFFSET, MPI_SUM, file.comm), "MPI_Allreduce")) {
    return 0;
  }
  if (file.rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  // Rank 0 moves the pointer past everyone's data and tells the others where it was.
  MPI_Offset base[2] = {0, 0};  // the pointer before, and rank 0's error class
  if (file.rank == 0 && !call.failed() && !shared_pointer(call, file, total, base[0])) base[1] = MPI_ERR_IO;
  if (!comm_ok(call, PMPI_Bcast(base, 2, MPI_OFFSET, 0, file.comm), "MPI_Bcast")) return 0;
  if (base[1] != 0 && !call.failed()) call.fail(MPI_ERR_IO, fmt::format("{}: the shared file pointer could not be "
                                                                        "advanced on rank 0", file.path));
  static const Datatype* const kByte = find_datatype(MPI_BYTE);
  const bool ok = type != nullptr && !call.failed();
  const Datatype& t = ok ? *type : *kByte;
  const std::int64_t start = (base[0] + before) * etype;
  return writing ? write_collective(call, file, start, buf, ok ? count : 0, t)
                 : read_collective(call, file, start, buf, ok ? count : 0, t);
}

int ordered_call(std::string_view name, MPI_File fh, bool writing, const void* buf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Status* status) {
  return file_call(name, fh, [&](Call& call, File& file) {
    const MPI_Count moved = ordered(call, file, writing, const_cast<void*>(buf), count, datatype);
    fill_status(status, moved);
  });
}

// Split collectives: _begin runs the collective, _end reports it.
int split_begin(std::string_view name, MPI_File fh, FileAccess how, MPI_Offset offset, const void* buf, MPI_Count count,
                MPI_Datatype datatype, bool is_ordered = false) {
  return file_call(name, fh, [&](Call& call, File& file) {
    if (file.split_active) {
      call.fail(MPI_ERR_IO, fmt::format("{}: a split collective is in progress on this file already (its _end comes "
                                        "first)", file.path));
      return;
    }
    how.collective = true;
    const MPI_Count moved = is_ordered ? ordered(call, file, how.writing, const_cast<void*>(buf), count, datatype)
                                       : access(call, file, how, offset, const_cast<void*>(buf), count, datatype);
    if (call.failed()) return;
    file.split_active = true;
    file.split_read = !how.writing;
    file.split_bytes = moved;
  });
}

int split_end(std::string_view name, MPI_File fh, bool writing, MPI_Status* status) {
  return file_call(name, fh, [&](Call& call, File& file) {
    if (!file.split_active || file.split_read == writing) {
      call.fail(MPI_ERR_IO, fmt::format("{}: no split collective {} is in progress on this file", file.path,
                                        writing ? "write" : "read"));
      return;
    }
    file.split_active = false;
    fill_status(status, file.split_bytes);
  });
}

// MPI_File_set_size and MPI_File_preallocate: a size, and a file that may be written.
bool check_resize(Call& call, const File& file, MPI_Offset size) {
  if (size < 0) {
    call.fail(MPI_ERR_ARG, fmt::format("negative size {}", size));
    return false;
  }
  if ((file.amode & MPI_MODE_RDONLY) != 0) {
    call.fail(MPI_ERR_READ_ONLY, fmt::format("{}: opened MPI_MODE_RDONLY", file.path));
    return false;
  }
  return true;
}

// Rank 0 does something to the file for all; everyone learns its outcome (the errno).
void on_rank0(Call& call, File& file, const std::function<int()>& action, std::string_view doing) {
  int error = file.rank == 0 ? action() : 0;
  if (!comm_ok(call, PMPI_Bcast(&error, 1, MPI_INT, 0, file.comm), "MPI_Bcast")) return;
  if (error != 0) call.fail(io_error_class(error), fmt::format("{}: {}: {}", file.path, doing, std::strerror(error)));
}

std::string side_file_path(const std::string& path, std::string_view token) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return fmt::format("{}/.{}.ftmpi-shared-pointer-{}", dir, base, token);
}

void close_file(Call& call, MPI_File* fh) {
  File* file = check_file(call, *fh);
  if (file == nullptr) return;
  // Every rank is done with the file before it may be deleted.
  comm_ok(call, PMPI_Barrier(file->comm), "MPI_Barrier");
  if (::close(file->fd) != 0 && !call.failed()) {
    call.fail(io_error_class(errno), fmt::format("{}: close: {}", file->path, std::strerror(errno)));
  }
  // Rank 0 removes what goes with the file; every rank returns after that, and learns its outcome.
  on_rank0(call, *file, [&] {
    ::unlink(file->shared_path.c_str());  // the side file exists only if the shared pointer was used
    const bool remove = (file->amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
    return remove && ::unlink(file->path.c_str()) != 0 ? errno : 0;
  }, "delete on close");
  for (MPI_Datatype* type : {&file->view.etype, &file->view.filetype}) {
    const Datatype* t = find_datatype(*type);
    if (t != nullptr && !t->predefined) PMPI_Type_free(type);
  }
  PMPI_Comm_free(&file->comm);
  open_files().erase(*fh);
  files().remove(*fh);
  *fh = MPI_FILE_NULL;
}

std::string_view yes_no(bool value) { return value ? "enable" : "disable"; }

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  return api_call("MPI_File_open", [&](Call& call) {
    call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_arg(call, fh, "fh")) return;
    *fh = MPI_FILE_NULL;
    call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
    // Checks every rank makes, then agreed on, so that a rank's bad argument fails the open everywhere.
    std::optional<std::string> problem;
    const Info* hints = nullptr;
    if (filename == nullptr) {
      problem = "filename is a null pointer";
    } else if (auto bad = amode_problem(amode)) {
      problem = std::move(bad);
    } else if (info != MPI_INFO_NULL && runtime().infos.find(info) == nullptr) {
      problem = fmt::format("invalid info object {:#x}", info);
    } else {
      hints = info == MPI_INFO_NULL ? nullptr : runtime().infos.find(info);
    }
    const int problem_class = !problem ? 0 : filename == nullptr ? MPI_ERR_ARG
                                           : amode_problem(amode) ? MPI_ERR_AMODE : MPI_ERR_INFO;
    MPI_Comm dup = MPI_COMM_NULL;
    if (!comm_ok(call, PMPI_Comm_dup(comm, &dup), "MPI_Comm_dup")) return;
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    auto give_up = [&] { PMPI_Comm_free(&dup); };
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(dup, &rank);
    PMPI_Comm_size(dup, &size);
    const int mine[2] = {amode, problem_class};
    std::vector<int> all(2 * static_cast<std::size_t>(size));
    if (!comm_ok(call, PMPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, dup), "MPI_Allgather")) {
      give_up();
      return;
    }
    for (int r = 0; r < size; ++r) {
      const int their_amode = all[2 * static_cast<std::size_t>(r)];
      const int their_class = all[2 * static_cast<std::size_t>(r) + 1];
      if (problem) {
        call.fail(problem_class, *problem);
      } else if (their_class != 0) {
        call.fail(their_class, fmt::format("rank {} of the communicator gave a bad argument ({})", r,
                                           error_class_name(their_class)));
      } else if (their_amode != amode) {
        call.fail(MPI_ERR_NOT_SAME, fmt::format("amode {:#x} here, {:#x} on rank {}: every rank must give the same",
                                                amode, their_amode, r));
      }
      if (call.failed()) {
        give_up();
        return;
      }
    }
    const std::string path(filename);
    int flags = O_CLOEXEC;
    if ((amode & MPI_MODE_RDONLY) != 0) flags |= O_RDONLY;
    if ((amode & MPI_MODE_WRONLY) != 0) flags |= O_WRONLY;
    if ((amode & MPI_MODE_RDWR) != 0) flags |= O_RDWR;
    // Rank 0 creates the file (exclusively when asked), the others open what it made. Not O_APPEND:
    // writes go to the offsets the view says (MPI_MODE_APPEND only places the pointers at the end).
    struct Opened {
      int error;
      char token[48];
    } opened{};
    auto open_here = [&](int with) {
      const int fd = ::open(path.c_str(), with, 0666);
      if (fd < 0) return std::pair{-1, errno};
      struct stat st{};
      if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        const int error = S_ISDIR(st.st_mode) ? EISDIR : errno;
        ::close(fd);
        return std::pair{-1, error};
      }
      return std::pair{fd, 0};
    };
    int fd = -1;
    if (rank == 0) {
      const int with = flags | ((amode & MPI_MODE_CREATE) != 0 ? O_CREAT : 0) |
                       ((amode & MPI_MODE_EXCL) != 0 ? O_EXCL : 0);
      auto [got, error] = open_here(with);
      fd = got;
      opened.error = error;
      const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
      fmt::format_to_n(opened.token, sizeof opened.token - 1, "{:x}-{:x}", ::getpid(), now);
    }
    if (!comm_ok(call, PMPI_Bcast(&opened, sizeof opened, MPI_BYTE, 0, dup), "MPI_Bcast")) {
      if (fd >= 0) ::close(fd);
      give_up();
      return;
    }
    if (opened.error != 0) {
      call.fail(io_error_class(opened.error), fmt::format("{}: {}", path, std::strerror(opened.error)));
      give_up();
      return;
    }
    int error = 0;
    if (rank != 0) std::tie(fd, error) = open_here(flags);
    std::vector<int> errors(static_cast<std::size_t>(size));
    if (!comm_ok(call, PMPI_Allgather(&error, 1, MPI_INT, errors.data(), 1, MPI_INT, dup), "MPI_Allgather")) {
      if (fd >= 0) ::close(fd);
      give_up();
      return;
    }
    for (int r = 0; r < size; ++r) {
      const int e = errors[static_cast<std::size_t>(r)];
      if (e == 0) continue;
      call.fail(io_error_class(e), r == rank ? fmt::format("{}: {}", path, std::strerror(e))
                                             : fmt::format("{}: rank {} could not open it: {}", path, r, std::strerror(e)));
      if (fd >= 0) ::close(fd);
      give_up();
      return;
    }
    // The aggregators of collective access: the first rank of each host.
    MPI_Comm host = MPI_COMM_NULL;
    int host_rank = 0;
    std::vector<int> leaders(static_cast<std::size_t>(size));
    if (!comm_ok(call, PMPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host),
                 "MPI_Comm_split_type")) {
      ::close(fd);
      give_up();
      return;
    }
    PMPI_Comm_rank(host, &host_rank);
    PMPI_Comm_free(&host);
    const int leader = host_rank == 0 ? 1 : 0;
    if (!comm_ok(call, PMPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, dup), "MPI_Allgather")) {
      ::close(fd);
      give_up();
      return;
    }
    File file;
    file.comm = dup;
    file.rank = rank;
    file.size = size;
    file.fd = fd;
    file.path = path;
    file.amode = amode;
    file.errhandler = default_file_errhandler();
    apply_hints(file.hints, hints);
    for (int r = 0; r < size; ++r) {
      if (leaders[static_cast<std::size_t>(r)] != 0) file.aggregators.push_back(r);
    }
    file.shared_path = side_file_path(path, opened.token);
    if ((amode & MPI_MODE_APPEND) != 0) {
      struct stat st{};
      if (::fstat(fd, &st) == 0) file.position = file.shared_initial = st.st_size;
    }
    *fh = files().add(std::move(file));
    open_files().insert(*fh);
  });
}
#pragma weak MPI_File_open = PMPI_File_open

int PMPI_File_close(MPI_File* fh) {
  return api_call("MPI_File_close", [&](Call& call) {
    call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
    if (check_arg(call, fh, "fh")) close_file(call, fh);
  });
}
#pragma weak MPI_File_close = PMPI_File_close

int PMPI_File_delete(const char* filename, MPI_Info info) {
  return api_call("MPI_File_delete", [&](Call& call) {
    call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
    const Info* hints = nullptr;
    if (!check_arg(call, filename, "filename") || !check_info_or_null(call, info, hints)) return;
    if (::unlink(filename) != 0) {
      call.fail(io_error_class(errno), fmt::format("{}: {}", filename, std::strerror(errno)));
    }
  });
}
#pragma weak MPI_File_delete = PMPI_File_delete

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  return file_call("MPI_File_set_size", fh, [&](Call& call, File& file) {
    if (!check_resize(call, file, size)) return;
    on_rank0(call, file, [&] { return ::ftruncate(file.fd, size) == 0 ? 0 : errno; }, "ftruncate");
  });
}
#pragma weak MPI_File_set_size = PMPI_File_set_size

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  return file_call("MPI_File_preallocate", fh, [&](Call& call, File& file) {
    if (!check_resize(call, file, size)) return;
    // Allocates [0, size): never shrinks the file (MPI-3.1 section 13.2.5).
    on_rank0(call, file, [&] { return size == 0 ? 0 : ::posix_fallocate(file.fd, 0, size); }, "posix_fallocate");
  });
}
#pragma weak MPI_File_preallocate = PMPI_File_preallocate

int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  return file_call("MPI_File_get_size", fh, [&](Call& call, File& file) {
    if (!check_arg(call, size, "size")) return;
    struct stat st{};
    if (::fstat(file.fd, &st) != 0) {
      call.fail(io_error_class(errno), fmt::format("{}: fstat: {}", file.path, std::strerror(errno)));
      return;
    }
    *size = st.st_size;
  });
}
#pragma weak MPI_File_get_size = PMPI_File_get_size

int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
  return file_call("MPI_File_get_group", fh, [&](Call& call, File& file) {
    if (check_arg(call, group, "group")) comm_ok(call, PMPI_Comm_group(file.comm, group), "MPI_Comm_group");
  });
}
#pragma weak MPI_File_get_group = PMPI_File_get_group

int PMPI_File_get_amode(MPI_File fh, int* amode) {
  return file_call("MPI_File_get_amode", fh, [&](Call& call, File& file) {
    if (check_arg(call, amode, "amode")) *amode = file.amode;
  });
}
#pragma weak MPI_File_get_amode = PMPI_File_get_amode

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
  return file_call("MPI_File_set_info", fh, [&](Call& call, File& file) {
    const Info* hints = nullptr;
    if (check_info_or_null(call, info, hints)) apply_hints(file.hints, hints);
  });
}
#pragma weak MPI_File_set_info = PMPI_File_set_info

int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  return file_call("MPI_File_get_info", fh, [&](Call& call, File& file) {
    if (!check_arg(call, info_used, "info_used")) return;
    Info info;
    info.entries = file.hints.entries;
    auto set = [&info](const std::string& key, std::string value) {
      for (auto& entry : info.entries) {
        if (entry.first == key) {
          entry.second = std::move(value);
          return;
        }
      }
      info.entries.emplace_back(key, std::move(value));
    };
    // The hints in effect, then what this process did through this handle (docs/mpi.md, "MPI-IO").
    set("cb_buffer_size", std::to_string(file.hints.cb_buffer_size));
    const std::size_t aggregators = file.hints.cb_nodes > 0
                                        ? std::min(file.aggregators.size(), static_cast<std::size_t>(file.hints.cb_nodes))
                                        : file.aggregators.size();
    set("cb_nodes", std::to_string(aggregators));
    set("romio_cb_write", std::string(yes_no(file.hints.cb_write)));
    set("romio_cb_read", std::string(yes_no(file.hints.cb_read)));
    set("ftmpi_io_write_calls", std::to_string(file.stats.write_calls));
    set("ftmpi_io_write_bytes", std::to_string(file.stats.write_bytes));
    set("ftmpi_io_largest_write", std::to_string(file.stats.largest_write));
    set("ftmpi_io_read_calls", std::to_string(file.stats.read_calls));
    set("ftmpi_io_read_bytes", std::to_string(file.stats.read_bytes));
    *info_used = runtime().infos.add(std::move(info));
  });
}
#pragma weak MPI_File_get_info = PMPI_File_get_info

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                       MPI_Info info) {
  return file_call("MPI_File_set_view", fh, [&](Call& call, File& file) {
    const Info* hints = nullptr;
    if (!check_info_or_null(call, info, hints) || !set_view(call, file, disp, etype, filetype, datarep)) return;
    apply_hints(file.hints, hints);
    // Both pointers go back to 0 (MPI-3.1 section 13.3); the shared one by rank 0 while the others wait.
    file.position = 0;
    file.shared_initial = 0;
    if (!comm_ok(call, PMPI_Barrier(file.comm), "MPI_Barrier")) return;
    struct stat st{};
    if (file.rank == 0 && ::stat(file.shared_path.c_str(), &st) == 0) set_shared_pointer(call, file, 0);
    comm_ok(call, PMPI_Barrier(file.comm), "MPI_Barrier");
  });
}
#pragma weak MPI_File_set_view = PMPI_File_set_view

int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep) {
  return file_call("MPI_File_get_view", fh, [&](Call& call, File& file) {
    if (!check_arg(call, disp, "disp") || !check_arg(call, etype, "etype") || !check_arg(call, filetype, "filetype") ||
        !check_arg(call, datarep, "datarep")) {
      return;
    }
    // Derived types come back as new handles the program frees (MPI-3.1 section 13.3).
    auto give = [&](MPI_Datatype kept, MPI_Datatype* out) {
      const Datatype* t = find_datatype(kept);
      if (t != nullptr && t->predefined) {
        *out = kept;
        return true;
      }
      return comm_ok(call, PMPI_Type_dup(kept, out), "MPI_Type_dup");
    };
    if (!give(file.view.etype, etype) || !give(file.view.filetype, filetype)) return;
    *disp = file.view.disp;
    std::snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", file.view.datarep.c_str());
  });
}
#pragma weak MPI_File_get_view = PMPI_File_get_view

// ---- Data access ----

#define FTMPI_FILE_AT(NAME, BUF_CONST, WRITING, COLLECTIVE)                                                    \
  int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUF_CONST void* buf, int count, MPI_Datatype datatype, \
                       MPI_Status* status) {                                                                  \
    return data_call("MPI_File_" #NAME, fh, FileAccess{Pointer::explicit_offset, WRITING, COLLECTIVE}, offset, buf, \
                     count, datatype, status);                                                                \
  }
#define FTMPI_FILE_PTR(NAME, BUF_CONST, POINTER, WRITING, COLLECTIVE)                                           \
  int PMPI_File_##NAME(MPI_File fh, BUF_CONST void* buf, int count, MPI_Datatype datatype, MPI_Status* status) { \
    return data_call("MPI_File_" #NAME, fh, FileAccess{POINTER, WRITING, COLLECTIVE}, 0, buf, count, datatype,     \
                     status);                                                                                 \
  }
#define FTMPI_FILE_IAT(NAME, BUF_CONST, WRITING)                                                              \
  int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUF_CONST void* buf, int count, MPI_Datatype datatype, \
                       MPI_Request* request) {                                                                \
    return nonblocking_call("MPI_File_" #NAME, fh, FileAccess{Pointer::explicit_offset, WRITING, false}, offset,  \
                            buf, count, datatype, request);                                                   \
  }
#define FTMPI_FILE_IPTR(NAME, BUF_CONST, POINTER, WRITING)                                                     \
  int PMPI_File_##NAME(MPI_File fh, BUF_CONST void* buf, int count, MPI_Datatype datatype,                    \
                       MPI_Request* request) {                                                                \
    return nonblocking_call("MPI_File_" #NAME, fh, FileAccess{POINTER, WRITING, false}, 0, buf, count, datatype,  \
                            request);                                                                         \
  }

FTMPI_FILE_AT(read_at, , false, false)
#pragma weak MPI_File_read_at = PMPI_File_read_at
FTMPI_FILE_AT(read_at_all, , false, true)
#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
FTMPI_FILE_AT(write_at, const, true, false)
#pragma weak MPI_File_write_at = PMPI_File_write_at
FTMPI_FILE_AT(write_at_all, const, true, true)
#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
FTMPI_FILE_IAT(iread_at, , false)
#pragma weak MPI_File_iread_at = PMPI_File_iread_at
FTMPI_FILE_IAT(iread_at_all, , false)
#pragma weak MPI_File_iread_at_all = PMPI_File_iread_at_all
FTMPI_FILE_IAT(iwrite_at, const, true)
#pragma weak MPI_File_iwrite_at = PMPI_File_iwrite_at
FTMPI_FILE_IAT(iwrite_at_all, const, true)
#pragma weak MPI_File_iwrite_at_all = PMPI_File_iwrite_at_all
FTMPI_FILE_PTR(read, , Pointer::individual, false, false)
#pragma weak MPI_File_read = PMPI_File_read
FTMPI_FILE_PTR(read_all, , Pointer::individual, false, true)
#pragma weak MPI_File_read_all = PMPI_File_read_all
FTMPI_FILE_PTR(write, const, Pointer::individual, true, false)
#pragma weak MPI_File_write = PMPI_File_write
FTMPI_FILE_PTR(write_all, const, Pointer::individual, true, true)
#pragma weak MPI_File_write_all = PMPI_File_write_all
FTMPI_FILE_IPTR(iread, , Pointer::individual, false)
#pragma weak MPI_File_iread = PMPI_File_iread
FTMPI_FILE_IPTR(iread_all, , Pointer::individual, false)
#pragma weak MPI_File_iread_all = PMPI_File_iread_all
FTMPI_FILE_IPTR(iwrite, const, Pointer::individual, true)
#pragma weak MPI_File_iwrite = PMPI_File_iwrite
FTMPI_FILE_IPTR(iwrite_all, const, Pointer::individual, true)
#pragma weak MPI_File_iwrite_all = PMPI_File_iwrite_all
FTMPI_FILE_PTR(read_shared, , Pointer::shared, false, false)
#pragma weak MPI_File_read_shared = PMPI_File_read_shared
FTMPI_FILE_PTR(write_shared, const, Pointer::shared, true, false)
#pragma weak MPI_File_write_shared = PMPI_File_write_shared
FTMPI_FILE_IPTR(iread_shared, , Pointer::shared, false)
#pragma weak MPI_File_iread_shared = PMPI_File_iread_shared
FTMPI_FILE_IPTR(iwrite_shared, const, Pointer::shared, true)
#pragma weak MPI_File_iwrite_shared = PMPI_File_iwrite_shared

int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return ordered_call("MPI_File_read_ordered", fh, false, buf, count, datatype, status);
}
#pragma weak MPI_File_read_ordered = PMPI_File_read_ordered

int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return ordered_call("MPI_File_write_ordered", fh, true, buf, count, datatype, status);
}
#pragma weak MPI_File_write_ordered = PMPI_File_write_ordered

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_read_at_all_begin", fh, FileAccess{Pointer::explicit_offset, false, true}, offset, buf,
                     count, datatype);
}
#pragma weak MPI_File_read_at_all_begin = PMPI_File_read_at_all_begin
int PMPI_File_read_at_all_end(MPI_File fh, void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_read_at_all_end", fh, false, status);
}
#pragma weak MPI_File_read_at_all_end = PMPI_File_read_at_all_end
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_write_at_all_begin", fh, FileAccess{Pointer::explicit_offset, true, true}, offset, buf,
                     count, datatype);
}
#pragma weak MPI_File_write_at_all_begin = PMPI_File_write_at_all_begin
int PMPI_File_write_at_all_end(MPI_File fh, const void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_write_at_all_end", fh, true, status);
}
#pragma weak MPI_File_write_at_all_end = PMPI_File_write_at_all_end
int PMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_read_all_begin", fh, FileAccess{Pointer::individual, false, true}, 0, buf, count, datatype);
}
#pragma weak MPI_File_read_all_begin = PMPI_File_read_all_begin
int PMPI_File_read_all_end(MPI_File fh, void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_read_all_end", fh, false, status);
}
#pragma weak MPI_File_read_all_end = PMPI_File_read_all_end
int PMPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_write_all_begin", fh, FileAccess{Pointer::individual, true, true}, 0, buf, count, datatype);
}
#pragma weak MPI_File_write_all_begin = PMPI_File_write_all_begin
int PMPI_File_write_all_end(MPI_File fh, const void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_write_all_end", fh, true, status);
}
#pragma weak MPI_File_write_all_end = PMPI_File_write_all_end
int PMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_read_ordered_begin", fh, FileAccess{Pointer::shared, false, true}, 0, buf, count, datatype,
                     true);
}
#pragma weak MPI_File_read_ordered_begin = PMPI_File_read_ordered_begin
int PMPI_File_read_ordered_end(MPI_File fh, void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_read_ordered_end", fh, false, status);
}
#pragma weak MPI_File_read_ordered_end = PMPI_File_read_ordered_end
int PMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin("MPI_File_write_ordered_begin", fh, FileAccess{Pointer::shared, true, true}, 0, buf, count, datatype,
                     true);
}
#pragma weak MPI_File_write_ordered_begin = PMPI_File_write_ordered_begin
int PMPI_File_write_ordered_end(MPI_File fh, const void* /*buf*/, MPI_Status* status) {
  return split_end("MPI_File_write_ordered_end", fh, true, status);
}
#pragma weak MPI_File_write_ordered_end = PMPI_File_write_ordered_end

// ---- File pointers ----

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call("MPI_File_seek", fh, [&](Call& call, File& file) {
    if ((file.amode & MPI_MODE_SEQUENTIAL) != 0) {
      call.fail(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("{}: opened MPI_MODE_SEQUENTIAL", file.path));
      return;
    }
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR) {
      base = file.position;
    } else if (whence == MPI_SEEK_END) {
      struct stat st{};
      if (::fstat(file.fd, &st) != 0) {
        call.fail(io_error_class(errno), fmt::format("{}: fstat: {}", file.path, std::strerror(errno)));
        return;
      }
      const auto etype = static_cast<MPI_Offset>(file.view.etype_size);
      base = (view_bytes_below(file.view, st.st_size) + etype - 1) / etype;
    } else if (whence != MPI_SEEK_SET) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid whence {} (MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END)", whence));
      return;
    }
    if (base + offset < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("seeking to {} etypes, before the start of the view", base + offset));
      return;
    }
    file.position = base + offset;
  });
}
#pragma weak MPI_File_seek = PMPI_File_seek

int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  return file_call("MPI_File_get_position", fh, [&](Call& call, File& file) {
    if (check_arg(call, offset, "offset")) *offset = file.position;
  });
}
#pragma weak MPI_File_get_position = PMPI_File_get_position

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  return file_call("MPI_File_get_byte_offset", fh, [&](Call& call, File& file) {
    if (!check_arg(call, disp, "disp")) return;
    if (offset < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("negative offset {}", offset));
      return;
    }
    *disp = view_byte_offset(file.view, offset * static_cast<MPI_Offset>(file.view.etype_size));
  });
}
#pragma weak MPI_File_get_byte_offset = PMPI_File_get_byte_offset

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call("MPI_File_seek_shared", fh, [&](Call& call, File& file) {
    // Collective: once every rank is done with the pointer's old value, rank 0 moves it while the others
    // wait (and learn its outcome).
    if (!comm_ok(call, PMPI_Barrier(file.comm), "MPI_Barrier")) return;
    int error_class = 0;
    if (file.rank == 0) {
      MPI_Offset base = 0;
      if (whence == MPI_SEEK_CUR) {
        shared_pointer(call, file, 0, base);
      } else if (whence == MPI_SEEK_END) {
        struct stat st{};
        const auto etype = static_cast<MPI_Offset>(file.view.etype_size);
        if (::fstat(file.fd, &st) == 0) {
          base = (view_bytes_below(file.view, st.st_size) + etype - 1) / etype;
        } else {
          call.fail(io_error_class(errno), fmt::format("{}: fstat: {}", file.path, std::strerror(errno)));
        }
      } else if (whence != MPI_SEEK_SET) {
        call.fail(MPI_ERR_ARG, fmt::format("invalid whence {} (MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END)", whence));
      }
      if (!call.failed() && base + offset < 0) {
        call.fail(MPI_ERR_ARG, fmt::format("seeking to {} etypes, before the start of the view", base + offset));
      }
      if (!call.failed()) set_shared_pointer(call, file, base + offset);
      error_class = call.failed() ? MPI_ERR_IO : 0;
    }
    if (!comm_ok(call, PMPI_Bcast(&error_class, 1, MPI_INT, 0, file.comm), "MPI_Bcast")) return;
    if (error_class != 0) call.fail(MPI_ERR_IO, fmt::format("{}: MPI_File_seek_shared failed on rank 0", file.path));
  });
}
#pragma weak MPI_File_seek_shared = PMPI_File_seek_shared

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  return file_call("MPI_File_get_position_shared", fh, [&](Call& call, File& file) {
    MPI_Offset value = 0;
    if (check_arg(call, offset, "offset") && shared_pointer(call, file, 0, value)) *offset = value;
  });
}
#pragma weak MPI_File_get_position_shared = PMPI_File_get_position_shared

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  return file_call("MPI_File_get_type_extent", fh, [&](Call& call, File& /*file*/) {
    const Datatype* type = check_datatype(call, datatype);
    if (type != nullptr && check_arg(call, extent, "extent")) *extent = type->extent();  // native: as in memory
  });
}
#pragma weak MPI_File_get_type_extent = PMPI_File_get_type_extent

int PMPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* /*read_conversion_fn*/,
                          MPI_Datarep_conversion_function* /*write_conversion_fn*/,
                          MPI_Datarep_extent_function* /*dtype_file_extent_fn*/, void* /*extra_state*/) {
  return api_call("MPI_Register_datarep", [&](Call& call) {
    call.raise_on_file(MPI_FILE_NULL, default_file_errhandler());
    if (!check_arg(call, datarep, "datarep")) return;
    const std::string_view name(datarep);
    if (name == "native" || name == "internal" || name == "external32") {
      call.fail(MPI_ERR_DUP_DATAREP, fmt::format("data representation \"{}\" is defined already", name));
    } else {
      call.fail(MPI_ERR_UNSUPPORTED_OPERATION,
                fmt::format("user-defined data representations (\"{}\") are not supported in ftmpi", name));
    }
  });
}
#pragma weak MPI_Register_datarep = PMPI_Register_datarep

// ---- Consistency ----

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
  return file_call("MPI_File_set_atomicity", fh, [&](Call& call, File& file) {
    // Collective: no rank may still be in an access of the old mode when another starts one of the new.
    if (comm_ok(call, PMPI_Barrier(file.comm), "MPI_Barrier")) file.atomic = flag != 0;
  });
}
#pragma weak MPI_File_set_atomicity = PMPI_File_set_atomicity

int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
  return file_call("MPI_File_get_atomicity", fh, [&](Call& call, File& file) {
    if (check_arg(call, flag, "flag")) *flag = file.atomic ? 1 : 0;
  });
}
#pragma weak MPI_File_get_atomicity = PMPI_File_get_atomicity

int PMPI_File_sync(MPI_File fh) {
  return file_call("MPI_File_sync", fh, [&](Call& call, File& file) {
    // This rank's writes reach storage; with a barrier on each side, others' reads see them too.
    if (::fsync(file.fd) != 0) {
      call.fail(io_error_class(errno), fmt::format("{}: fsync: {}", file.path, std::strerror(errno)));
    }
  });
}
#pragma weak MPI_File_sync = PMPI_File_sync

// ---- Error handlers and handle conversion ----

int PMPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn, MPI_Errhandler* errhandler) {
  return api_call("MPI_File_create_errhandler", [&](Call& call) {
    if (!check_arg(call, reinterpret_cast<const void*>(file_errhandler_fn), "file_errhandler_fn") ||
        !check_arg(call, errhandler, "errhandler")) {
      return;
    }
    // Called as a communicator's would be: the handle (an int) by address, then the code.
    *errhandler = add_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(file_errhandler_fn));
  });
}
#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  return api_call("MPI_File_set_errhandler", [&](Call& call) {
    File* f = nullptr;
    if (file != MPI_FILE_NULL && (f = check_file(call, file)) == nullptr) return;
    if (!errhandler_live(errhandler)) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid error handler {:#x}", errhandler));
      return;
    }
    (f != nullptr ? f->errhandler : default_file_errhandler()) = errhandler;
  });
}
#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  return api_call("MPI_File_get_errhandler", [&](Call& call) {
    File* f = nullptr;
    if (file != MPI_FILE_NULL && (f = check_file(call, file)) == nullptr) return;
    if (!check_arg(call, errhandler, "errhandler")) return;
    *errhandler = f != nullptr ? f->errhandler : default_file_errhandler();
    hand_out_errhandler(*errhandler);
  });
}
#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
  return api_call("MPI_File_call_errhandler", [&](Call& call) {
    MPI_Errhandler handler = default_file_errhandler();
    if (fh != MPI_FILE_NULL) {
      File* f = check_file(call, fh);
      if (f == nullptr) return;
      handler = f->errhandler;
    }
    if (handler == MPI_ERRORS_RETURN || call_created_errhandler(handler, fh, errorcode)) return;
    call.raise_on_file(fh, MPI_ERRORS_ARE_FATAL);
    call.fail(is_error_class(errorcode) ? errorcode : MPI_ERR_OTHER,
              fmt::format("MPI_ERRORS_ARE_FATAL called with error code {}", errorcode));
  });
}
#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler

MPI_Fint PMPI_File_c2f(MPI_File file) { return static_cast<MPI_Fint>(file); }
#pragma weak MPI_File_c2f = PMPI_File_c2f

MPI_File PMPI_File_f2c(MPI_Fint file) { return static_cast<MPI_File>(file); }
#pragma weak MPI_File_f2c = PMPI_File_f2c

}  // extern "C"
