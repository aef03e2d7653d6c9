// MPI-IO (MPI-3.1 chapter 13) over POSIX files: the open-file table, views, and the data access
// paths the calls of api_file.cpp share.
//
// Every rank opens the file itself (local file systems and NFS). A view maps the file's data stream
// (the bytes the filetype selects, tile after tile from the displacement) to file offsets as a list
// of contiguous segments; an access packs the memory side once and issues one pwrite/pread per
// contiguous file segment (reads of nearby segments share one pread: data sieving, safe for reads).
//
// Collective access is two-phase, aggregated by host: the first rank of every host (MPI_Comm_split_type
// MPI_COMM_TYPE_SHARED, found at open) is an aggregator; the accessed range is cut into one contiguous
// file domain per aggregator, processed in windows of cb_buffer_size bytes; per window each rank sends
// its pieces (offset, length, data) to the window's aggregator (alltoallv), which writes every
// contiguous covered run with one pwrite (reads: one pread over the window's requested span, the data
// sent back).
//
// The shared file pointer lives in a hidden side file next to the file, read and advanced under an
// fcntl byte-range lock (as ROMIO does): it is then shared by ranks on every host that sees the file,
// with no rank having to answer messages while it computes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mpi/api.hpp"
#include "mpi/datatype.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {

class Call;

// One contiguous run of file bytes an access touches.
struct Segment {
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

struct FileView {
  MPI_Offset disp = 0;
  // The handles get_view reports: predefined ones as given, derived ones our own duplicates (freed
  // when the view changes), so that the program may free its types after set_view.
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype filetype = MPI_BYTE;
  std::size_t etype_size = 1;
  std::shared_ptr<const Layout> layout;  // the filetype's; null: contiguous bytes (the default view)
  std::string datarep = "native";
};

// The hints ftmpi acts on (docs/mpi.md, "MPI-IO"); every other key is kept and reported back.
struct FileHints {
  std::size_t cb_buffer_size = std::size_t{16} << 20;  // bytes per aggregator per window
  int cb_nodes = 0;                                    // aggregators at most; 0: one per host
  bool cb_write = true;                                // romio_cb_write != "disable"
  bool cb_read = true;                                 // romio_cb_read != "disable"
  std::vector<std::pair<std::string, std::string>> entries;  // as given, in order
};

// What this process did to the file through this handle, reported by MPI_File_get_info.
struct FileStats {
  std::uint64_t write_calls = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t largest_write = 0;
  std::uint64_t read_calls = 0;
  std::uint64_t read_bytes = 0;
};

struct File {
  bool live = false;
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the open's communicator, errors returned
  int rank = 0;
  int size = 1;
  int fd = -1;
  std::string path;
  int amode = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;
  FileView view;
  MPI_Offset position = 0;  // the individual file pointer, in etypes of the view
  bool atomic = false;
  FileHints hints;
  std::vector<int> aggregators;  // ranks of `comm`, one per host, ascending
  std::string shared_path;       // the shared file pointer's side file (created at first use)
  MPI_Offset shared_initial = 0;  // its value while the side file does not exist
  FileStats stats;
  // A split collective between its _begin and _end (one at a time per file, MPI-3.1 section 13.4.5).
  bool split_active = false;
  bool split_read = false;
  MPI_Count split_bytes = 0;
};
using FileTable = HandleTable<HandleKind::file, File>;

FileTable& files();
// The handles of the files open now (what MPI_Finalize looks for).
std::set<MPI_File>& open_files();
// The handler new files start with and open/delete errors use (set on MPI_FILE_NULL).
MPI_Errhandler& default_file_errhandler();

// The outcome of an MPI call the library makes on a file's communicator (which returns errors): false
// after failing `call` with its class.
bool comm_ok(Call& call, int rc, std::string_view what);

// The MPI error class of an errno from the file system.
int io_error_class(int error) noexcept;

// Views: checks and installs etype, filetype and representation (MPI_ERR_TYPE, _UNSUPPORTED_DATAREP).
bool set_view(Call& call, File& file, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
              const char* datarep);
// The file segments of `bytes` data bytes from data-stream position `start`, adjacent ones merged.
std::vector<Segment> view_segments(const FileView& view, std::int64_t start, std::int64_t bytes);
// Data-stream bytes of the view that lie below file offset `end`.
std::int64_t view_bytes_below(const FileView& view, std::int64_t end);
// The file offset of data-stream position `start`.
std::int64_t view_byte_offset(const FileView& view, std::int64_t start);

// Data access: `count` items of `type` at data-stream position `start` (etypes times etype size).
// Returns the bytes moved (a read past the end of file moves fewer), after failing the call on error.
MPI_Count write_independent(Call& call, File& file, std::int64_t start, const void* buf, MPI_Count count,
                            const Datatype& type);
MPI_Count read_independent(Call& call, File& file, std::int64_t start, void* buf, MPI_Count count,
                           const Datatype& type);
// Collective (every rank of the file's communicator calls): two-phase through the aggregators.
MPI_Count write_collective(Call& call, File& file, std::int64_t start, const void* buf, MPI_Count count,
                           const Datatype& type);
MPI_Count read_collective(Call& call, File& file, std::int64_t start, void* buf, MPI_Count count,
                          const Datatype& type);

// The shared file pointer, in etypes: read, advanced by `delta` (returning the value before), set.
bool shared_pointer(Call& call, File& file, MPI_Offset delta, MPI_Offset& before);
bool set_shared_pointer(Call& call, File& file, MPI_Offset value);

// Byte-range locks for atomic mode (and the side file): F_SETLKW over [offset, offset + length).
bool lock_range(Call& call, int fd, std::int64_t offset, std::int64_t length, bool exclusive,
                const std::string& path);
void unlock_range(int fd, std::int64_t offset, std::int64_t length) noexcept;

// MPI_Finalize: files still open are reported (one line each on stderr) and their descriptors closed;
// MPI-3.1 section 13.2.1 requires programs to close them first.
void close_files_at_finalize() noexcept;

}  // namespace ftmpi::mpi
