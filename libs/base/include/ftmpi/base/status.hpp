// Errors as values: Status and Result<T>. No exceptions on the data path (docs/architecture.md, "Errors").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace ftmpi::base {

// What went wrong. Each code belongs to one severity, which tells the caller how far the damage goes.
enum class Errc : std::uint16_t {
  ok = 0,
  // frame: drop this frame (and let retransmission repair it)
  truncated,            // shorter than its header claims
  malformed,            // fields contradict each other or the protocol
  bad_checksum,         // header or payload checksum mismatch
  wrong_job,            // job key does not match ours
  unsupported_version,  // wire version we do not speak
  duplicate,            // already received
  // caller: the request itself is wrong
  invalid_argument,
  out_of_range,
  not_found,
  would_block,  // nothing to do now; try again later
  unsupported,  // valid request this build cannot serve
  resource_exhausted,
  // rail: this rail to this peer is unusable; fail over
  io_error,
  rail_down,
  // peer: no rail left to a peer
  peer_unreachable,
  // job: cannot continue
  internal,
};

enum class Severity : std::uint8_t { none, frame, caller, rail, peer, job };

Severity severity_of(Errc code) noexcept;
std::string_view to_string(Errc code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  explicit Status(Errc code) noexcept : code_(code) {}

  static Status ok() noexcept { return {}; }

  bool is_ok() const noexcept { return code_ == Errc::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  Errc code() const noexcept { return code_; }
  Severity severity() const noexcept { return severity_of(code_); }
  const std::string& message() const noexcept { return message_; }
  // "malformed: fragment offset beyond message length"
  std::string to_string() const;
  // The same error with "what: " in front of its message, saying where it happened; ok stays ok.
  Status prefixed(std::string_view what) const {
    return is_ok() ? Status{} : Status(code_, std::string(what) + ": " + message_);
  }

 private:
  Errc code_ = Errc::ok;
  std::string message_;
};

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "Result<Status> makes no sense; return Status");

 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::in_place_index<1>, std::move(status)) {}  // NOLINT
  Result(Errc code, std::string message) : v_(std::in_place_index<1>, code, std::move(message)) {}

  bool is_ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return is_ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; Status::ok() when there is a value.
  Status status() const { return is_ok() ? Status::ok() : std::get<1>(v_); }
  Errc code() const noexcept { return is_ok() ? Errc::ok : std::get<1>(v_).code(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ftmpi::base
