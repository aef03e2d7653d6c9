// A C++ program over the C interface, as C++ applications use MPI since MPI-3 removed the C++ bindings:
// RAII owners of communicators, datatypes and ops; std::vector and std::complex buffers with the
// MPI_CXX_* types; a C++ struct described with MPI_Type_create_struct and reduced by a user op that is
// a C++ function; errors turned into exceptions by checking return codes under MPI_ERRORS_RETURN;
// std::thread under MPI_THREAD_MULTIPLE, each thread with its own communicator. Runs at any size.
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

int world_rank = 0;
int world_size = 0;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL rank %d: %s\n", world_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 99);
  std::abort();
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// An MPI error as a C++ exception (the communicators here return errors instead of aborting).
class MpiError : public std::runtime_error {
 public:
  MpiError(int code, const std::string& call) : std::runtime_error(call + ": " + text(code)), code_(code) {}
  int error_class() const {
    int c = 0;
    MPI_Error_class(code_, &c);
    return c;
  }

 private:
  static std::string text(int code) {
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(code, s, &n);
    return std::string(s, static_cast<std::size_t>(n));
  }
  int code_;
};

void mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) throw MpiError(code, call);
}
#define MPI(call) mpi((call), #call)

// Owns a communicator: freed when it goes out of scope.
class Communicator {
 public:
  explicit Communicator(MPI_Comm parent) {
    MPI(MPI_Comm_dup(parent, &comm_));
    MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  }
  ~Communicator() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  operator MPI_Comm() const { return comm_; }
  int rank() const {
    int r = 0;
    MPI(MPI_Comm_rank(comm_, &r));
    return r;
  }
  int size() const {
    int s = 0;
    MPI(MPI_Comm_size(comm_, &s));
    return s;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

struct Particle {
  double mass;
  int id;
  float position[3];
};

// Owns a committed datatype.
class Datatype {
 public:
  explicit Datatype(MPI_Datatype type) : type_(type) { MPI(MPI_Type_commit(&type_)); }
  ~Datatype() { MPI_Type_free(&type_); }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  operator MPI_Datatype() const { return type_; }

 private:
  MPI_Datatype type_;
};

MPI_Datatype particle_type() {
  const int lengths[3] = {1, 1, 3};
  const MPI_Aint displacements[3] = {offsetof(Particle, mass), offsetof(Particle, id), offsetof(Particle, position)};
  const MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT};
  MPI_Datatype raw = MPI_DATATYPE_NULL;
  MPI(MPI_Type_create_struct(3, lengths, displacements, types, &raw));
  MPI_Datatype resized = MPI_DATATYPE_NULL;
  MPI(MPI_Type_create_resized(raw, 0, sizeof(Particle), &resized));
  MPI(MPI_Type_free(&raw));
  return resized;
}

// The heaviest particle wins; ties go to the lower id (commutative).
extern "C" void heaviest(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const Particle*>(in);
  auto* b = static_cast<Particle*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (a[i].mass > b[i].mass || (a[i].mass == b[i].mass && a[i].id < b[i].id)) b[i] = a[i];
  }
}

void containers_and_types(const Communicator& comm) {
  const int rank = comm.rank(), size = comm.size();
  // std::vector<std::complex<double>> with MPI_CXX_DOUBLE_COMPLEX: an allreduce of sums.
  std::vector<std::complex<double>> z(4);
  for (std::size_t k = 0; k < z.size(); ++k) z[k] = {static_cast<double>(rank), static_cast<double>(k)};
  MPI(MPI_Allreduce(MPI_IN_PLACE, z.data(), static_cast<int>(z.size()), MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, comm));
  const double ranks = size * (size - 1) / 2.0;
  check(z[3] == std::complex<double>(ranks, 3.0 * size), "complex allreduce");
  // bool with MPI_CXX_BOOL: a logical and.
  bool all = rank != size + 1;
  MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_CXX_BOOL, MPI_LAND, comm));
  check(all, "MPI_CXX_BOOL land");
  // A struct type and a user op written in C++.
  Datatype type(particle_type());
  MPI_Op op = MPI_OP_NULL;
  MPI(MPI_Op_create(heaviest, 1, &op));
  std::vector<Particle> mine(3), best(3);
  for (int k = 0; k < 3; ++k) {
    mine[static_cast<std::size_t>(k)] = {static_cast<double>((rank * 7 + k * 3) % (size + 2)), rank * 10 + k,
                                         {static_cast<float>(rank), 0.5f, -1.0f}};
  }
  MPI(MPI_Allreduce(mine.data(), best.data(), 3, type, op, comm));
  for (int k = 0; k < 3; ++k) {
    Particle expect{-1.0, 0, {}};
    for (int r = 0; r < size; ++r) {
      const double m = (r * 7 + k * 3) % (size + 2);
      if (m > expect.mass) expect = {m, r * 10 + k, {static_cast<float>(r), 0.5f, -1.0f}};
    }
    const Particle& got = best[static_cast<std::size_t>(k)];
    check(got.mass == expect.mass && got.id == expect.id && got.position[0] == expect.position[0],
          "user op on a struct, element " + std::to_string(k));
  }
  MPI(MPI_Op_free(&op));
  // Gather of strings' lengths then the strings (an allgatherv of chars).
  const std::string name = "rank-" + std::string(static_cast<std::size_t>(rank + 1), '*');
  const int length = static_cast<int>(name.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  std::vector<int> displs(static_cast<std::size_t>(size));
  std::exclusive_scan(lengths.begin(), lengths.end(), displs.begin(), 0);
  std::string all_names(static_cast<std::size_t>(displs.back() + lengths.back()), '\0');
  MPI(MPI_Allgatherv(name.data(), length, MPI_CHAR, all_names.data(), lengths.data(), displs.data(), MPI_CHAR, comm));
  for (int r = 0; r < size; ++r) {
    const std::string expect = "rank-" + std::string(static_cast<std::size_t>(r + 1), '*');
    check(all_names.compare(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]), expect.size(), expect) == 0,
          "allgatherv of strings: " + all_names);
  }
}

void errors_as_exceptions(const Communicator& comm) {
  int value = 0;
  try {
    MPI(MPI_Send(&value, 1, MPI_INT, comm.size(), 0, comm));
    fail("a send to a rank outside the communicator did not throw");
  } catch (const MpiError& e) {
    check(e.error_class() == MPI_ERR_RANK, std::string("expected MPI_ERR_RANK: ") + e.what());
  }
  try {
    MPI(MPI_Bcast(&value, -1, MPI_INT, 0, comm));
    fail("a negative count did not throw");
  } catch (const MpiError& e) {
    check(e.error_class() == MPI_ERR_COUNT, std::string("expected MPI_ERR_COUNT: ") + e.what());
  }
}

// Each thread its own communicator: a ring of std::vector<long> messages.
void threads(const Communicator& comm) {
  constexpr int kThreads = 3;
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int t = 0; t < kThreads; ++t) comms.push_back(std::make_unique<Communicator>(static_cast<MPI_Comm>(comm)));
  std::vector<std::thread> pool;
  std::vector<int> ok(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      const Communicator& c = *comms[static_cast<std::size_t>(t)];
      const int rank = c.rank(), size = c.size();
      std::vector<long> out(64), in(64);
      for (int round = 0; round < 20; ++round) {
        std::iota(out.begin(), out.end(), 1000L * t + 100L * rank + round);
        MPI(MPI_Sendrecv(out.data(), 64, MPI_LONG, (rank + 1) % size, round, in.data(), 64, MPI_LONG,
                         (rank + size - 1) % size, round, c, MPI_STATUS_IGNORE));
        if (in[5] != 1000L * t + 100L * ((rank + size - 1) % size) + round + 5) return;
      }
      ok[static_cast<std::size_t>(t)] = 1;
    });
  }
  for (std::thread& th : pool) th.join();
  check(std::all_of(ok.begin(), ok.end(), [](int v) { return v == 1; }), "a thread's ring got wrong data");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  try {
    check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    const Communicator comm(MPI_COMM_WORLD);
    containers_and_types(comm);
    errors_as_exceptions(comm);
    threads(comm);
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  MPI_Finalize();
  if (world_rank == 0) std::printf("cxx_program: %d ranks passed\n", world_size);
  return 0;
}
