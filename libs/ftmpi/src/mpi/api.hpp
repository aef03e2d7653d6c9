// The one way the shim includes mpi.h: every MPI_*/PMPI_* declared there gets default visibility, so the
// library (built with -fvisibility=hidden) exports exactly the MPI interface and nothing of C++.
#pragma once

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop
