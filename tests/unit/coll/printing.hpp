// Lets BOOST_TEST print the enums it compares.
#pragma once

#include <ostream>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/tuning.hpp"

namespace ftmpi::base {
inline std::ostream& operator<<(std::ostream& os, Errc code) { return os << to_string(code); }
}  // namespace ftmpi::base

namespace ftmpi::coll {
inline std::ostream& operator<<(std::ostream& os, Algorithm algorithm) { return os << to_string(algorithm); }
}  // namespace ftmpi::coll
