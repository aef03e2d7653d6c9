// The collectives' point-to-point interface (libs/coll's Transport) over the engine, on the hidden
// collective context of one communicator: its messages never meet the application's, whatever their
// tags, because the engine matches on the context first.
//
// Every send is a standard-mode engine send and every receive names its source and tag exactly, as
// libs/coll asks. A receive expects an exact size: a message of another size (ranks that disagree on
// a collective's counts) fails it with Errc::out_of_range, which the MPI layer reports as
// MPI_ERR_TRUNCATE. progress() does nothing: the MPI layer's own waiting loops drive the engine and
// test the schedules (collective.hpp), so a schedule's test() must not poll the engine a second time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/engine.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/transport.hpp"

namespace ftmpi::mpi {

class EngineTransport final : public coll::Transport {
 public:
  // `view` is the communicator's collective view; it must outlive the transport (both live in Comm).
  explicit EngineTransport(const engine::CommView* view) noexcept : view_(view) {}

  int rank() const noexcept override { return view_->rank; }
  int size() const noexcept override { return view_->size; }

  base::Result<coll::RequestId> isend(const void* data, std::size_t bytes, int dest, int tag) override;
  base::Result<coll::RequestId> irecv(void* data, std::size_t bytes, int source, int tag) override;
  base::Result<bool> test(coll::RequestId request) override;
  base::Status wait(coll::RequestId request) override;
  base::Status progress() override { return {}; }

 private:
  // One send or receive in flight; RequestId is its index in records_.
  struct Record {
    engine::Request* op = nullptr;
    std::size_t expected = 0;  // receives: the exact size the collective expects
    int peer = -1;
    bool receive = false;
  };

  coll::RequestId track(const Record& record);
  // The completed request's outcome; releases it and its record.
  base::Status finish(coll::RequestId id, const engine::Completion& completion);

  const engine::CommView* view_;
  std::vector<Record> records_;
  std::vector<coll::RequestId> free_;
};

}  // namespace ftmpi::mpi
