// The installation test's C++ program, built with mpicxx as a C++ application (or OSU's C++-linked
// build) would be: mpi.h included from C++, the standard library beside it, and the ring of hello.c
// with the values in a std::vector so that the C++ runtime is really linked.
#include <mpi.h>

#include <iostream>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> values(4);
  std::iota(values.begin(), values.end(), rank * 10);
  MPI_Sendrecv_replace(values.data(), static_cast<int>(values.size()), MPI_INT, (rank + 1) % size, 0,
                       (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const int left = (rank + size - 1) % size;
  if (values.front() != left * 10 || values.back() != left * 10 + 3) {
    std::cerr << "rank " << rank << ": got " << values.front() << ".." << values.back() << " from the left\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::cout << "hello from C++ rank " << rank << " of " << size << "\n";
  MPI_Finalize();
  return 0;
}
