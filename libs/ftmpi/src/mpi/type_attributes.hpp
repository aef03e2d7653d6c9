// Attributes cached on datatypes (MPI_Type_set_attr ...; type_attributes.cpp): what MPI_Type_dup and
// MPI_Type_free do with them.
#pragma once

namespace ftmpi::mpi {

class Call;

// Runs the copy callbacks of `from`'s attributes for the new type `to` (MPI_Type_dup); false when one
// failed (the call records it).
bool copy_type_attributes(Call& call, int from, int to);
// Runs the delete callbacks of a type being freed; false when one failed.
bool delete_type_attributes(Call& call, int type);

}  // namespace ftmpi::mpi
