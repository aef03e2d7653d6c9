// A rank started by a PMIx server (Slurm's srun --mpi=pmix): its job from PMIx, its wire-up through
// PMIx's key-value store and fences. Compiled only when libpmix was found (FTMPI_HAVE_PMIX).
#include "pmix_bootstrap.hpp"

#include <pmix.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "ftmpi/base/log.hpp"
#include "rank_control.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

// Every key this library publishes is prefixed, so that none collides with the server's own (pmix.*).
std::string pmix_key(std::string_view key) { return "ftmpi." + std::string(key); }

Status pmix_error(std::string_view what, pmix_status_t rc) {
  return Status(Errc::peer_unreachable, std::string(what) + ": " + PMIx_Error_string(rc));
}

// A value PMIx_Get returned, released with it.
struct PmixValue {
  pmix_value_t* value = nullptr;
  PmixValue() = default;
  PmixValue(const PmixValue&) = delete;
  PmixValue& operator=(const PmixValue&) = delete;
  ~PmixValue() {
    if (value != nullptr) {
      PMIx_Value_destruct(value);
      std::free(value);
    }
  }
};

// An unsigned integer the server published about `proc` under `key`, of whichever width it chose.
Result<std::uint64_t> get_unsigned(const pmix_proc_t& proc, const char* key) {
  PmixValue v;
  if (pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &v.value); rc != PMIX_SUCCESS) {
    return pmix_error(std::string("PMIx_Get(") + key + ")", rc);
  }
  switch (v.value->type) {
    case PMIX_UINT8: return v.value->data.uint8;
    case PMIX_UINT16: return v.value->data.uint16;
    case PMIX_UINT32: return v.value->data.uint32;
    case PMIX_UINT64: return v.value->data.uint64;
    case PMIX_SIZE: return v.value->data.size;
    case PMIX_PROC_RANK: return v.value->data.rank;
    default: return Status(Errc::malformed, std::string("PMIx's ") + key + " is not an unsigned integer");
  }
}

Result<std::string> get_string(const pmix_proc_t& proc, const char* key) {
  PmixValue v;
  if (pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &v.value); rc != PMIX_SUCCESS) {
    return pmix_error(std::string("PMIx_Get(") + key + ")", rc);
  }
  if (v.value->type == PMIX_STRING && v.value->data.string != nullptr) return std::string(v.value->data.string);
  if (v.value->type == PMIX_BYTE_OBJECT) return std::string(v.value->data.bo.bytes, v.value->data.bo.size);
  return Status(Errc::malformed, std::string("PMIx's ") + key + " is not a string");
}

// The job's identity as rank 0 publishes it: job id, job key, secret.
constexpr std::string_view kIdentityKey = "identity";
constexpr std::size_t kIdentityBytes = 8 + 8 + sizeof(Secret);

std::string encode_identity(const JobIdentity& id) {
  std::string bytes(kIdentityBytes, '\0');
  std::memcpy(bytes.data(), &id.job_id, 8);
  std::memcpy(bytes.data() + 8, &id.job_key, 8);
  std::memcpy(bytes.data() + 16, id.secret.data(), id.secret.size());
  return bytes;
}

Result<JobIdentity> decode_identity(std::string_view bytes) {
  if (bytes.size() != kIdentityBytes) {
    return Status(Errc::malformed, "rank 0's job identity has " + std::to_string(bytes.size()) + " bytes, not " +
                                       std::to_string(kIdentityBytes));
  }
  JobIdentity id;
  std::memcpy(&id.job_id, bytes.data(), 8);
  std::memcpy(&id.job_key, bytes.data() + 8, 8);
  std::memcpy(id.secret.data(), bytes.data() + 16, id.secret.size());
  if (id.job_key == 0) return Status(Errc::malformed, "rank 0's job key is 0");
  return id;
}

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() = default;
  PmixBootstrap(const PmixBootstrap&) = delete;
  PmixBootstrap& operator=(const PmixBootstrap&) = delete;
  ~PmixBootstrap() override {
    // Started but never finalized (MPI_Init failed after PMIx_Init): still leave the server cleanly.
    if (initialized_ && !finalized_) PMIx_Finalize(nullptr, 0);
  }

  Status init() {
    if (pmix_status_t rc = PMIx_Init(&self_, nullptr, 0); rc != PMIX_SUCCESS) {
      return pmix_error("PMIx_Init (is the PMIx server that started this rank running?)", rc);
    }
    initialized_ = true;
    pmix_proc_t job_proc;
    std::memset(&job_proc, 0, sizeof job_proc);
    std::memcpy(job_proc.nspace, self_.nspace, sizeof job_proc.nspace);
    job_proc.rank = PMIX_RANK_WILDCARD;

    auto size = get_unsigned(job_proc, PMIX_JOB_SIZE);
    if (!size) return size.status();
    if (*size == 0 || *size > kMaxJobSize) {
      return Status(Errc::invalid_argument, "PMIx says the job has " + std::to_string(*size) +
                                                " ranks; ftmpi runs 1.." + std::to_string(kMaxJobSize));
    }
    job_.size = static_cast<std::uint32_t>(*size);
    if (self_.rank >= job_.size) {
      return Status(Errc::invalid_argument, "PMIx rank " + std::to_string(self_.rank) + " is not below the job size " +
                                                std::to_string(job_.size));
    }
    job_.rank = self_.rank;
    auto local_rank = get_unsigned(self_, PMIX_LOCAL_RANK);
    if (!local_rank) return local_rank.status();
    auto local_size = get_unsigned(job_proc, PMIX_LOCAL_SIZE);
    if (!local_size) return local_size.status();
    job_.local_rank = static_cast<std::uint32_t>(*local_rank);
    job_.local_size = static_cast<std::uint32_t>(*local_size);
    if (auto host = get_string(self_, PMIX_HOSTNAME)) host_ = *host;

    // The frames' MAC key must be the same secret in every rank and unknown outside the job: rank 0
    // draws it and the others read it through PMIx (the server's channel, as ftrun's environment is).
    if (job_.rank == 0) {
      auto identity = make_job_identity();
      if (!identity) return identity.status();
      if (Status s = put(kIdentityKey, encode_identity(*identity)); !s) return s;
    }
    if (Status s = fence(); !s) return s.prefixed("PMIx fence for the job identity");
    auto identity = get(0, kIdentityKey);
    if (!identity) return identity.status();
    auto decoded = decode_identity(*identity);
    if (!decoded) return decoded.status();
    job_.identity = *decoded;
    base::logger().debug("PMIx: namespace {} rank {} of {}, local rank {} of {} on host '{}'", self_.nspace,
                         job_.rank, job_.size, job_.local_rank, job_.local_size, host_);
    return {};
  }

  std::string_view launcher_name() const noexcept override { return "PMIx"; }
  const JobInfo& job() const noexcept override { return job_; }
  bool is_singleton() const noexcept override { return false; }

  Status put(std::string_view key, std::string_view value) override {
    if (finalized_) return Status(Errc::invalid_argument, "put after finalize");
    pmix_byte_object_t bytes;
    bytes.bytes = const_cast<char*>(value.data());  // PMIx_Value_load copies; it never writes here
    bytes.size = value.size();
    pmix_value_t v;
    if (pmix_status_t rc = PMIx_Value_load(&v, &bytes, PMIX_BYTE_OBJECT); rc != PMIX_SUCCESS) {
      return pmix_error("PMIx_Value_load", rc);
    }
    const pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, pmix_key(key).c_str(), &v);
    PMIx_Value_destruct(&v);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Put(" + pmix_key(key) + ")", rc);
    return {};
  }

  Status fence() override {
    if (Status s = commit(); !s) return s;
    pmix_info_t collect = collect_data();
    if (pmix_status_t rc = PMIx_Fence(nullptr, 0, &collect, 1); rc != PMIX_SUCCESS) return pmix_error("PMIx_Fence", rc);
    return {};
  }

  // Every fence collects the data put before it: all ranks must pass the same attributes, and a
  // barrier that nobody put anything before costs nothing more.
  Status fence_begin() override {
    if (fence_state_.load() == kFencePending) {
      return Status(Errc::invalid_argument, "fence begun while another is pending");
    }
    if (Status s = commit(); !s) return s;
    fence_state_.store(kFencePending);
    pmix_info_t collect = collect_data();
    const pmix_status_t rc = PMIx_Fence_nb(nullptr, 0, &collect, 1, &PmixBootstrap::fence_done, this);
    if (rc != PMIX_SUCCESS) {
      fence_state_.store(kFenceIdle);
      return pmix_error("PMIx_Fence_nb", rc);
    }
    return {};
  }

  Result<bool> fence_test() override {
    const int state = fence_state_.load(std::memory_order_acquire);
    if (state == kFenceIdle) return Status(Errc::invalid_argument, "fence_test without fence_begin");
    if (state == kFencePending) return false;
    fence_state_.store(kFenceIdle);
    if (fence_status_ != PMIX_SUCCESS) return pmix_error("PMIx_Fence_nb", fence_status_);
    return true;
  }

  Result<std::string> get(std::uint32_t rank, std::string_view key) const override {
    if (rank >= job_.size) {
      return Status(Errc::out_of_range,
                    "rank " + std::to_string(rank) + " is not in a job of " + std::to_string(job_.size));
    }
    pmix_proc_t proc = self_;
    proc.rank = rank;
    PmixValue v;
    const std::string full_key = pmix_key(key);
    if (pmix_status_t rc = PMIx_Get(&proc, full_key.c_str(), nullptr, 0, &v.value); rc != PMIX_SUCCESS) {
      return Status(rc == PMIX_ERR_NOT_FOUND ? Errc::not_found : Errc::peer_unreachable,
                    "rank " + std::to_string(rank) + "'s key '" + std::string(key) + "' from PMIx: " +
                        PMIx_Error_string(rc));
    }
    if (v.value->type != PMIX_BYTE_OBJECT) {
      return Status(Errc::malformed, "rank " + std::to_string(rank) + "'s key '" + std::string(key) +
                                         "' is not a byte object");
    }
    return std::string(v.value->data.bo.bytes, v.value->data.bo.size);
  }

  [[noreturn]] void abort(int code, std::string_view message) override {
    // No ftrun is there to say who ended the job and with what code, and the server may kill this rank
    // before its exit status reaches anyone (Slurm then reports every task "Killed"): say it here.
    if (message.empty()) {
      std::fprintf(stderr, "ftmpi: rank %u called MPI_Abort with error code %d: ending the job\n", job_.rank, code);
    } else {
      std::fprintf(stderr, "ftmpi: rank %u ends the job with error code %d\n", job_.rank, code);
    }
    std::fflush(nullptr);
    const std::string text(message);
    // The server ends every rank of the job (Slurm: the step); it may or may not return first.
    PMIx_Abort(code, text.c_str(), nullptr, 0);
    const int status = code & 0xff;
    ::_exit(status == 0 ? 1 : status);
  }

  // No ftrun serves the control plane: this rank serves its own socket (rank_control.hpp). Where it
  // cannot (no runtime directory of this user on this host), the job runs without one, as under ftrun.
  Status watch_control() override {
    if (control_) return {};
    auto control = RankControl::start(job_, host_.empty() ? "localhost" : host_);
    if (!control) {
      base::logger().warn("no control socket for tools (ftpath, ftinject): {}", control.status().message());
      return {};
    }
    control_ = std::move(*control);
    return {};
  }
  const std::atomic<bool>* control_pending() const noexcept override {
    return control_ ? control_->pending() : nullptr;
  }
  std::vector<Control> take_control() override { return control_ ? control_->take() : std::vector<Control>{}; }
  Status reply_control(std::uint32_t id, bool ok, std::string text) override {
    if (control_) control_->reply(id, ok, std::move(text));
    return {};
  }

  Status finalize() override {
    if (finalized_) return Status(Errc::invalid_argument, "finalize after finalize");
    finalized_ = true;
    control_.reset();  // tools no longer find a rank that is leaving
    if (pmix_status_t rc = PMIx_Finalize(nullptr, 0); rc != PMIX_SUCCESS) return pmix_error("PMIx_Finalize", rc);
    return {};
  }

 private:
  static constexpr int kFenceIdle = 0;
  static constexpr int kFencePending = 1;
  static constexpr int kFenceDone = 2;

  // Called on PMIx's progress thread when a non-blocking fence completes.
  static void fence_done(pmix_status_t status, void* self) {
    auto* me = static_cast<PmixBootstrap*>(self);
    me->fence_status_ = status;
    me->fence_state_.store(kFenceDone, std::memory_order_release);
  }

  static pmix_info_t collect_data() {
    pmix_info_t info;
    std::memset(&info, 0, sizeof info);
    const bool yes = true;
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    return info;
  }

  Status commit() {
    if (finalized_) return Status(Errc::invalid_argument, "fence after finalize");
    if (pmix_status_t rc = PMIx_Commit(); rc != PMIX_SUCCESS) return pmix_error("PMIx_Commit", rc);
    return {};
  }

  pmix_proc_t self_{};
  std::unique_ptr<RankControl> control_;
  JobInfo job_;
  std::string host_;
  bool initialized_ = false;
  bool finalized_ = false;
  std::atomic<int> fence_state_{kFenceIdle};
  pmix_status_t fence_status_ = PMIX_SUCCESS;  // written before fence_state_ becomes kFenceDone
};

}  // namespace

Result<std::unique_ptr<Bootstrap>> pmix_bootstrap() {
  auto bootstrap = std::make_unique<PmixBootstrap>();
  if (Status s = bootstrap->init(); !s) return s;
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

}  // namespace ftmpi::rte
