// The PMIx implementation of Bootstrap (bootstrap.hpp), built only with libpmix (FTMPI_HAVE_PMIX).
#pragma once

#include <memory>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/bootstrap.hpp"

namespace ftmpi::rte {

// Initialises PMIx (PMIx_Init finds the server through the PMIX_* variables it set) and reads the job:
// rank, size and local rank and size from the server, the job's identity from rank 0 through a fence.
base::Result<std::unique_ptr<Bootstrap>> pmix_bootstrap();

}  // namespace ftmpi::rte
