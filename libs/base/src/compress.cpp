// zstd in memory and whole-file writes (compress.hpp).
#include "ftmpi/base/compress.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ftmpi::base {

std::string zstd_compress(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  // Only a destination too small fails, and compressBound rules that out.
  if (ZSTD_isError(n) != 0U) return {};
  out.resize(n);
  return out;
}

Result<std::string> zstd_decompress(std::string_view data, std::size_t limit) {
  ZSTD_DStream* stream = ZSTD_createDStream();
  if (stream == nullptr) return Status(Errc::resource_exhausted, "zstd: cannot create a decompression stream");
  std::string out;
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::size_t last = 1;  // 0 once a frame is complete
  char chunk[1 << 16];
  while (in.pos < in.size) {
    ZSTD_outBuffer o{chunk, sizeof chunk, 0};
    last = ZSTD_decompressStream(stream, &o, &in);
    if (ZSTD_isError(last) != 0U) {
      const std::string why = ZSTD_getErrorName(last);
      ZSTD_freeDStream(stream);
      return Status(Errc::invalid_argument, "not zstd data (" + why + ")");
    }
    out.append(chunk, o.pos);
    if (out.size() > limit) {
      ZSTD_freeDStream(stream);
      return Status(Errc::out_of_range, "zstd data larger than " + std::to_string(limit) + " bytes");
    }
    if (o.pos == 0 && in.pos == in.size) break;
  }
  // Output the decoder still holds (none once a frame is complete: another call would begin a new one).
  while (last != 0) {
    ZSTD_outBuffer o{chunk, sizeof chunk, 0};
    ZSTD_inBuffer none{nullptr, 0, 0};
    last = ZSTD_decompressStream(stream, &o, &none);
    if (ZSTD_isError(last) != 0U || o.pos == 0) break;
    out.append(chunk, o.pos);
    if (out.size() > limit) {
      ZSTD_freeDStream(stream);
      return Status(Errc::out_of_range, "zstd data larger than " + std::to_string(limit) + " bytes");
    }
  }
  ZSTD_freeDStream(stream);
  if (data.empty()) return Status(Errc::invalid_argument, "not zstd data (empty)");
  if (last != 0) return Status(Errc::invalid_argument, "truncated zstd data");
  return out;
}

Status write_file(const std::string& path, std::string_view data) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status(Errc::io_error, "creating " + temporary + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return Status(Errc::io_error, "writing " + temporary + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temporary.c_str());
    return Status(Errc::io_error, "renaming " + temporary + " to " + path + ": " + why);
  }
  return {};
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Errc::not_found, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ftmpi::base
