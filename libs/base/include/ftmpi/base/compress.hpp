// zstd frames in and out of memory, and whole files written safely: the flight recorder's files and
// ftinject's timelines (docs/ftinject.md).
#pragma once

#include <string>
#include <string_view>

#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

// One zstd frame holding `data` (level 3: fast, and a timeline of JSON lines shrinks about tenfold).
std::string zstd_compress(std::string_view data);
// The bytes of every zstd frame in `data`, concatenated. Errors say what is wrong ("not zstd data",
// "truncated zstd data"); at most `limit` bytes are produced (a corrupt or hostile file cannot exhaust
// memory).
Result<std::string> zstd_decompress(std::string_view data, std::size_t limit = std::size_t{1} << 30);

// Writes `data` to `path` through a temporary file renamed over it (mode 0600): a reader sees the old
// file or the new one, never half of one.
Status write_file(const std::string& path, std::string_view data);
// A whole file; not_found when it does not exist.
Result<std::string> read_file(const std::string& path);

}  // namespace ftmpi::base
