# Writes mpif.h, the Fortran include file, from mpi.h: every integer constant and handle mpi.h defines
# (so the two can never disagree), the Fortran datatypes among them, the status
# layout, the sentinels (MPI_STATUS_IGNORE, MPI_IN_PLACE, MPI_BOTTOM, MPI_UNWEIGHTED ...) as common
# blocks whose addresses libftmpi recognises (src/mpi/fortran.cpp), and the predefined attribute
# callbacks (MPI_COMM_DUP_FN ...) as EXTERNAL procedures libftmpi defines. The text is valid fixed
# and free form alike: statements from column 7, lines under 72 characters, comments with "!" in
# column 1.
function(ftmpi_write_mpif header output)
  file(STRINGS ${header} defines REGEX "^#define MPI_[A-Z0-9_]+ ")
  set(lines "! mpif.h: ftmpi's MPI constants for Fortran, generated from mpi.h.\n")
  string(APPEND lines "! Use it with include 'mpif.h', or the module: use mpi.\n")
  set(names "")
  foreach(line ${defines})
    if(line MATCHES "^#define (MPI_[A-Z0-9_]+) \\(\\(MPI_(Comm|Datatype|Op|Errhandler|Group|Info|Message|Win|Request|File)\\)(0x[0-9a-fA-F]+|-?[0-9]+)\\)")
      set(name ${CMAKE_MATCH_1})
      math(EXPR value "${CMAKE_MATCH_3}")
    elseif(line MATCHES "^#define (MPI_[A-Z0-9_]+) \\(?(-?[0-9]+|0x[0-9a-fA-F]+)\\)?( .*)?$")
      set(name ${CMAKE_MATCH_1})
      math(EXPR value "${CMAKE_MATCH_2}")
    elseif(line MATCHES "^#define (MPI_[A-Z0-9_]+) (MPI_[A-Z0-9_]+)$")
      # A synonym (MPI_LONG_LONG is MPI_LONG_LONG_INT): the same value, defined above it.
      set(name ${CMAKE_MATCH_1})
      if(NOT DEFINED value_${CMAKE_MATCH_2})
        continue()
      endif()
      set(value ${value_${CMAKE_MATCH_2}})
    else()
      continue()
    endif()
    string(APPEND lines "      integer ${name}\n      parameter (${name}=${value})\n")
    set(value_${name} ${value})
    list(APPEND names ${name})
  endforeach()
  string(APPEND lines
    "      integer MPI_STATUS_SIZE, MPI_SOURCE, MPI_TAG, MPI_ERROR\n"
    "      parameter (MPI_STATUS_SIZE=6)\n"
    "      parameter (MPI_SOURCE=1, MPI_TAG=2, MPI_ERROR=3)\n"
    "      integer MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND\n"
    "      parameter (MPI_ADDRESS_KIND=8, MPI_OFFSET_KIND=8)\n"
    "      parameter (MPI_COUNT_KIND=8)\n"
    "      integer MPI_INTEGER_KIND\n"
    "      parameter (MPI_INTEGER_KIND=4)\n"
    "      integer MPI_STATUS_IGNORE(MPI_STATUS_SIZE)\n"
    "      integer MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)\n"
    "      integer MPI_IN_PLACE, MPI_BOTTOM, MPI_ERRCODES_IGNORE(1)\n"
    "      common /ftmpi_f_status_ignore/ MPI_STATUS_IGNORE\n"
    "      common /ftmpi_f_statuses_ignore/ MPI_STATUSES_IGNORE\n"
    "      common /ftmpi_f_in_place/ MPI_IN_PLACE\n"
    "      common /ftmpi_f_bottom/ MPI_BOTTOM\n"
    "      common /ftmpi_f_errcodes_ignore/ MPI_ERRCODES_IGNORE\n"
    "      integer MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)\n"
    "      common /ftmpi_f_unweighted/ MPI_UNWEIGHTED\n"
    "      common /ftmpi_f_weights_empty/ MPI_WEIGHTS_EMPTY\n"
    "      external MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN\n"
    "      external MPI_COMM_DUP_FN\n"
    "      external MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN\n"
    "      external MPI_TYPE_DUP_FN\n"
    "      external MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN\n"
    "      external MPI_WIN_DUP_FN\n"
    "      external MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, MPI_DUP_FN\n"
    "      double precision MPI_WTIME, MPI_WTICK\n"
    "      external MPI_WTIME, MPI_WTICK\n"
    "      integer(kind=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF\n"
    "      external MPI_AINT_ADD, MPI_AINT_DIFF\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/mpif.h.new "${lines}")
  configure_file(${CMAKE_CURRENT_BINARY_DIR}/mpif.h.new ${output} COPYONLY)  # rewritten only when it changes
endfunction()
