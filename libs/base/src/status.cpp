#include "ftmpi/base/status.hpp"

namespace ftmpi::base {

Severity severity_of(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return Severity::none;
    case Errc::truncated:
    case Errc::malformed:
    case Errc::bad_checksum:
    case Errc::wrong_job:
    case Errc::unsupported_version:
    case Errc::duplicate:
      return Severity::frame;
    case Errc::invalid_argument:
    case Errc::out_of_range:
    case Errc::not_found:
    case Errc::would_block:
    case Errc::unsupported:
    case Errc::resource_exhausted:
      return Severity::caller;
    case Errc::io_error:
    case Errc::rail_down:
      return Severity::rail;
    case Errc::peer_unreachable:
      return Severity::peer;
    case Errc::internal:
      return Severity::job;
  }
  return Severity::job;
}

std::string_view to_string(Errc code) noexcept {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::truncated: return "truncated";
    case Errc::malformed: return "malformed";
    case Errc::bad_checksum: return "bad checksum";
    case Errc::wrong_job: return "wrong job key";
    case Errc::unsupported_version: return "unsupported version";
    case Errc::duplicate: return "duplicate";
    case Errc::invalid_argument: return "invalid argument";
    case Errc::out_of_range: return "out of range";
    case Errc::not_found: return "not found";
    case Errc::would_block: return "would block";
    case Errc::unsupported: return "unsupported";
    case Errc::resource_exhausted: return "resource exhausted";
    case Errc::io_error: return "I/O error";
    case Errc::rail_down: return "rail down";
    case Errc::peer_unreachable: return "peer unreachable";
    case Errc::internal: return "internal error";
  }
  return "unknown error";
}

std::string Status::to_string() const {
  std::string out(base::to_string(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace ftmpi::base
