#include "mpi/transport.hpp"

#include <string>

#include "mpi/p2p.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

coll::RequestId EngineTransport::track(const Record& record) {
  if (free_.empty()) {
    records_.push_back(record);
    return records_.size() - 1;
  }
  const coll::RequestId id = free_.back();
  free_.pop_back();
  records_[id] = record;
  return id;
}

base::Result<coll::RequestId> EngineTransport::isend(const void* data, std::size_t bytes, int dest, int tag) {
  engine::Request* op = engine().isend(*view_, data, bytes, dest, tag, engine::SendMode::standard);
  return track({op, bytes, dest, false});
}

base::Result<coll::RequestId> EngineTransport::irecv(void* data, std::size_t bytes, int source, int tag) {
  engine::Request* op = engine().irecv(*view_, data, bytes, source, tag);
  return track({op, bytes, source, true});
}

base::Status EngineTransport::finish(coll::RequestId id, const engine::Completion& completion) {
  Record& record = records_[id];
  engine().release(record.op);
  const Record done = record;
  record = Record{};
  free_.push_back(id);
  if (completion.lost_peer >= 0) [[unlikely]] {
    return base::Status(base::Errc::peer_unreachable, lost_peer_reason(completion.lost_peer));
  }
  if (done.receive && (completion.truncated || completion.bytes != done.expected)) {
    return base::Status(base::Errc::out_of_range,
                        "a message from rank " + std::to_string(done.peer) + " is " +
                            (completion.truncated ? "longer" : "shorter") + " than the " +
                            std::to_string(done.expected) +
                            " bytes this rank expects (the ranks disagree on the collective's counts)");
  }
  return {};
}

base::Result<bool> EngineTransport::test(coll::RequestId request) {
  engine::Completion completion;
  if (!engine().is_complete(records_[request].op, &completion)) return false;
  if (base::Status s = finish(request, completion); !s) return s;
  return true;
}

base::Status EngineTransport::wait(coll::RequestId request) {
  engine::Completion completion;
  engine::Engine& e = engine();
  engine::Request* op = records_[request].op;
  progress_until([&] { return e.is_complete(op, &completion); });
  return finish(request, completion);
}

}  // namespace ftmpi::mpi
