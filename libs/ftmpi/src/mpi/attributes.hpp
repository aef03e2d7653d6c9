// Attribute caching (MPI-3.1 section 6.7) for communicators, datatypes and windows: keyvals of every
// kind live in one table (Keyval::kind tells them apart), and the program's callbacks run the same way
// whatever the object, since every handle is an int (attributes.cpp).
#pragma once

#include <vector>

#include "mpi/api.hpp"
#include "mpi/comm.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi {

class Call;

// One of the communicator attributes MPI predefines (MPI_TAG_UB ...), whose values are ints.
bool is_predefined_keyval(int keyval) noexcept;
// A keyval of this kind (MPI_ERR_KEYVAL otherwise), not freed unless `freed_ok` (reading and deleting
// attributes set before the free).
Keyval* check_keyval(Call& call, int keyval, KeyvalKind kind, bool freed_ok = false);
// MPI_*_create_keyval and MPI_*_free_keyval.
void create_keyval(Call& call, KeyvalKind kind, MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* remove,
                   int* keyval, void* extra_state);
void free_keyval(Call& call, KeyvalKind kind, int* keyval);

// The copy callbacks of the attributes of object `handle` (MPI_Comm_dup, MPI_Type_dup): the copies the
// callbacks keep are appended to `to`; false when one failed (the call records it).
bool copy_attributes(Call& call, int handle, const std::vector<Attribute>& from, std::vector<Attribute>& to);
// The delete callback of one attribute of object `handle` about to go; false when it failed.
bool delete_attribute(Call& call, int handle, const Attribute& attribute);
// Takes every attribute out of `attributes` and runs their delete callbacks, the last set first when
// asked (MPI_COMM_SELF at MPI_Finalize); false when one failed.
bool delete_attributes(Call& call, int handle, std::vector<Attribute>& attributes, bool last_set_first = false);

// A datatype's attributes (Runtime::type_attributes) at MPI_Type_dup and MPI_Type_free.
bool copy_type_attributes(Call& call, int from, int to);
bool delete_type_attributes(Call& call, int type);

}  // namespace ftmpi::mpi
