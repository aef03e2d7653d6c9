// MPI-1 names that MPI-3.0 removed but old programs (and test suites such as MPICH's) still call:
// each forwards to the call that replaced it, whose name the error messages give.
#include "mpi/api.hpp"

extern "C" {

int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}
#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return PMPI_Comm_set_errhandler(comm, errhandler); }
#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get

int PMPI_Address(void* location, MPI_Aint* address) { return PMPI_Get_address(location, address); }
#pragma weak MPI_Address = PMPI_Address

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}
#pragma weak MPI_Type_extent = PMPI_Type_extent

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint extent = 0;
  return PMPI_Type_get_extent(datatype, displacement, &extent);
}
#pragma weak MPI_Type_lb = PMPI_Type_lb

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint lb = 0, extent = 0;
  const int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
  if (rc == MPI_SUCCESS && displacement != nullptr) *displacement = lb + extent;
  return rc;
}
#pragma weak MPI_Type_ub = PMPI_Type_ub

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
#pragma weak MPI_Type_hvector = PMPI_Type_hvector

int PMPI_Type_hindexed(int count, int* blocklengths, MPI_Aint* displacements, MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}
#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed

int PMPI_Type_struct(int count, int* blocklengths, MPI_Aint* displacements, MPI_Datatype* types,
                     MPI_Datatype* newtype) {
  return PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}
#pragma weak MPI_Type_struct = PMPI_Type_struct

}  // extern "C"
