# Installs ftmpi into a temporary prefix, MOVES the prefix, then builds and runs a program from the
# moved tree in every way a user builds one: with its ftcc (and mpicc), a CMake project using find_package(ftmpi),
# with pkg-config (ftmpi, ftmpi-cxx, ftmpi-fort); with CMake's FindMPI given the wrappers; a C++ program with
# ftcxx (mpicxx, mpic++); Fortran with ftfort (mpifort). Every run goes through the moved ftrun.
# The wrappers take their compiler from FTMPI_CC / FTMPI_CXX, never from CC / CXX (`CC=mpicc ./configure`
# must not make mpicc run itself), and refuse a compiler that is themselves.
#
#   -DBUILD_DIR=<the build tree>  -DWORK_DIR=<scratch directory>  -DSOURCE=<an MPI C program>
#   -DSOURCE_CXX=<an MPI C++ program>  -DGENERATOR=<CMake generator for the consumer project>
#   [-DSOURCE_F77=<fixed-form Fortran, mpif.h> -DSOURCE_F90=<free-form Fortran, use mpi>
#    -DSOURCE_F08=<free-form Fortran, use mpi_f08> -DSOURCE_FCHECK=<the module both free-form ones use>]
cmake_minimum_required(VERSION 3.25)

function(run)
  cmake_parse_arguments(A "" "EXPECT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${A_COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${A_COMMAND}\n--- stdout\n${out}--- stderr\n${err}")
  endif()
  if(A_EXPECT AND NOT out MATCHES "${A_EXPECT}")
    message(FATAL_ERROR "output of ${A_COMMAND} does not match '${A_EXPECT}':\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

# A command that must fail with status 2 and say EXPECT on stderr.
function(refused)
  cmake_parse_arguments(A "" "EXPECT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${A_COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  if(NOT status EQUAL 2 OR NOT err MATCHES "${A_EXPECT}")
    message(FATAL_ERROR "not refused with status 2 and '${A_EXPECT}' (${status}): ${A_COMMAND}\n--- stdout\n${out}--- stderr\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(staged ${WORK_DIR}/staged)
set(prefix ${WORK_DIR}/moved)
run(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staged})
file(RENAME ${staged} ${prefix})

foreach(file bin/ftcc bin/mpicc bin/ftcxx bin/mpicxx bin/mpic++ bin/ftrun include/mpi.h lib/libftmpi.so lib/pkgconfig/ftmpi.pc
             lib/cmake/ftmpi/ftmpiConfig.cmake lib/cmake/ftmpi/ftmpiConfigVersion.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()
foreach(alias mpicc mpicxx mpic++)
  if(NOT IS_SYMLINK ${prefix}/bin/${alias})
    message(FATAL_ERROR "bin/${alias} is not a symlink to its wrapper")
  endif()
endforeach()

set(ftrun ${prefix}/bin/ftrun)
set(expect "hello from rank 0 of 2.*hello from rank 1 of 2|hello from rank 1 of 2.*hello from rank 0 of 2")

# ftcc and mpicc: the command they show names the moved prefix; what they build runs.
run(COMMAND ${prefix}/bin/ftcc -show ${SOURCE} -o ${WORK_DIR}/hello_ftcc EXPECT "-I${prefix}/include")
run(COMMAND ${prefix}/bin/ftcc ${SOURCE} -o ${WORK_DIR}/hello_ftcc)
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_ftcc EXPECT "${expect}")
run(COMMAND ${prefix}/bin/mpicc -c ${SOURCE} -o ${WORK_DIR}/hello.o)
run(COMMAND ${prefix}/bin/mpicc ${WORK_DIR}/hello.o -o ${WORK_DIR}/hello_mpicc)
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_mpicc EXPECT "${expect}")

# CC=mpicc (autotools' usual `CC=mpicc ./configure`): the wrapper does not run $CC, so it does not run
# itself; FTMPI_CC chooses the compiler; a compiler that is the wrapper itself is refused.
run(COMMAND ${CMAKE_COMMAND} -E env CC=${prefix}/bin/mpicc ${prefix}/bin/mpicc -show ${SOURCE} EXPECT "^cc ")
run(COMMAND ${CMAKE_COMMAND} -E env CC=${prefix}/bin/mpicc ${prefix}/bin/mpicc ${SOURCE} -o ${WORK_DIR}/hello_cc_loop)
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_cc_loop EXPECT "${expect}")
run(COMMAND ${CMAKE_COMMAND} -E env "FTMPI_CC=gcc -O1" ${prefix}/bin/ftcc -show ${SOURCE} EXPECT "^gcc -O1 -I")
refused(COMMAND ${CMAKE_COMMAND} -E env FTMPI_CC=${prefix}/bin/mpicc ${prefix}/bin/ftcc ${SOURCE}
        EXPECT "mpicc is ftcc itself; set FTMPI_CC to a compiler")
refused(COMMAND ${CMAKE_COMMAND} -E env PATH=${prefix}/bin:$ENV{PATH} FTMPI_CC=mpicc ${prefix}/bin/mpicc ${SOURCE}
        EXPECT "FTMPI_CC=mpicc is ftcc itself")

# C++: mpicxx and mpic++ (ftcxx) compile and link with c++ (FTMPI_CXX), CXX ignored as CC is.
set(expect_cxx "hello from C\\+\\+ rank 0 of 2.*hello from C\\+\\+ rank 1 of 2|hello from C\\+\\+ rank 1 of 2.*hello from C\\+\\+ rank 0 of 2")
run(COMMAND ${prefix}/bin/mpicxx -show ${SOURCE_CXX} EXPECT "^c\\+\\+ -I${prefix}/include")
run(COMMAND ${CMAKE_COMMAND} -E env CXX=${prefix}/bin/mpicxx ${prefix}/bin/mpicxx -std=c++17 -Wall -Werror ${SOURCE_CXX}
            -o ${WORK_DIR}/hello_cxx)
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_cxx EXPECT "${expect_cxx}")
run(COMMAND ${prefix}/bin/mpic++ -c ${SOURCE_CXX} -o ${WORK_DIR}/hello_cxx.o)
run(COMMAND ${prefix}/bin/mpic++ ${WORK_DIR}/hello_cxx.o -o ${WORK_DIR}/hello_cxx_link)
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_cxx_link EXPECT "${expect_cxx}")
refused(COMMAND ${CMAKE_COMMAND} -E env FTMPI_CXX=${prefix}/bin/mpic++ ${prefix}/bin/mpicxx ${SOURCE_CXX}
        EXPECT "is ftcxx itself; set FTMPI_CXX to a compiler")

# Fortran (when the build had a compiler): mpifort builds an `include 'mpif.h'` program and a `use mpi`
# one from the moved tree, with FC=mpifort set as autotools projects set it.
if(SOURCE_F77)
  foreach(file bin/ftfort include/mpif.h include/mpi.mod)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "not installed: ${file}")
    endif()
  endforeach()
  foreach(alias mpifort mpif90 mpif77)
    if(NOT IS_SYMLINK ${prefix}/bin/${alias})
      message(FATAL_ERROR "bin/${alias} is not a symlink to its wrapper")
    endif()
  endforeach()
  run(COMMAND ${prefix}/bin/mpifort -show ${SOURCE_F77} EXPECT "^gfortran -I${prefix}/include")
  run(COMMAND ${CMAKE_COMMAND} -E env FC=${prefix}/bin/mpifort ${prefix}/bin/mpif77 ${SOURCE_F77} -o ${WORK_DIR}/f77)
  run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/f77 EXPECT "fortran_f77: 2 ranks passed")
  run(COMMAND ${prefix}/bin/mpifort -J ${WORK_DIR} ${SOURCE_FCHECK} ${SOURCE_F90} -o ${WORK_DIR}/f90)
  run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/f90 EXPECT "fortran_mod: 2 ranks passed")
  refused(COMMAND ${CMAKE_COMMAND} -E env FTMPI_FC=${prefix}/bin/mpifort ${prefix}/bin/mpif90 ${SOURCE_F90}
          EXPECT "is ftfort itself; set FTMPI_FC to a compiler")
endif()
# `use mpi_f08` from the moved tree: the module's calls are in libftmpi, so mpifort links nothing more.
if(SOURCE_F08)
  if(NOT EXISTS ${prefix}/include/mpi_f08.mod)
    message(FATAL_ERROR "not installed: include/mpi_f08.mod")
  endif()
  run(COMMAND ${prefix}/bin/mpifort -J ${WORK_DIR} ${SOURCE_FCHECK} ${SOURCE_F08} -o ${WORK_DIR}/f08)
  run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/f08 EXPECT "fortran_f08: ok")
endif()

# A CMake project: find_package(ftmpi) from the moved prefix.
set(project ${WORK_DIR}/project)
file(MAKE_DIRECTORY ${project})
file(COPY ${SOURCE} DESTINATION ${project})
get_filename_component(source_name ${SOURCE} NAME)
file(WRITE ${project}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(ftmpi 0.1 REQUIRED)
add_executable(hello ${source_name})
target_link_libraries(hello PRIVATE ftmpi::ftmpi)
")
run(COMMAND ${CMAKE_COMMAND} -S ${project} -B ${project}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix})
run(COMMAND ${CMAKE_COMMAND} --build ${project}/build)
run(COMMAND ${ftrun} -n 2 ${project}/build/hello EXPECT "${expect}")

# The programs each project below builds in `dir`: hello (C), hello_cxx and, with Fortran, hello_f.
function(run_programs dir)
  run(COMMAND ${ftrun} -n 2 ${dir}/hello EXPECT "${expect}")
  run(COMMAND ${ftrun} -n 2 ${dir}/hello_cxx EXPECT "${expect_cxx}")
  if(SOURCE_F77)
    run(COMMAND ${ftrun} -n 2 ${dir}/hello_f EXPECT "fortran_f77: 2 ranks passed")
  endif()
endfunction()

# CMake's own FindMPI (find_package(MPI)) given ftmpi's wrappers: MPI::MPI_C, MPI::MPI_CXX and, with a
# Fortran compiler, MPI::MPI_Fortran targets that build programs that run.
set(findmpi ${WORK_DIR}/findmpi)
file(MAKE_DIRECTORY ${findmpi})
set(languages C CXX)
set(wrappers -DMPI_C_COMPILER=${prefix}/bin/mpicc -DMPI_CXX_COMPILER=${prefix}/bin/mpicxx)
set(fortran_lines "")
if(SOURCE_F77)
  list(APPEND languages Fortran)
  list(APPEND wrappers -DMPI_Fortran_COMPILER=${prefix}/bin/mpifort)
  set(fortran_lines "add_executable(hello_f ${SOURCE_F77})
target_link_libraries(hello_f PRIVATE MPI::MPI_Fortran)
target_compile_options(hello_f PRIVATE -fallow-argument-mismatch)
")
endif()
# FindMPI takes a sanitized tree's -fsanitize (from the wrappers' link line) for a compile option and
# leaves it off the link: a sanitized build's consumers link the sanitizers themselves.
if(SANITIZED)
  list(APPEND wrappers "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
string(REPLACE ";" " " language_list "${languages}")
file(WRITE ${findmpi}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(findmpi ${language_list})
find_package(MPI 3.1 REQUIRED COMPONENTS ${language_list})
add_executable(hello ${SOURCE})
target_link_libraries(hello PRIVATE MPI::MPI_C)
add_executable(hello_cxx ${SOURCE_CXX})
target_link_libraries(hello_cxx PRIVATE MPI::MPI_CXX)
${fortran_lines}")
run(COMMAND ${CMAKE_COMMAND} -S ${findmpi} -B ${findmpi}/build -G ${GENERATOR} ${wrappers}
    EXPECT "Found MPI_C: ${prefix}/lib/libftmpi.so")
run(COMMAND ${CMAKE_COMMAND} --build ${findmpi}/build)
run_programs(${findmpi}/build)

# Projects that take the wrappers as their compilers, as autotools and CMake users set them:
# CC=mpicc CXX=mpicxx F77=mpif77 ./configure && make, and CC/CXX/FC=... cmake, plain executables.
set(ENV{CC} ${prefix}/bin/mpicc)
set(ENV{CXX} ${prefix}/bin/mpicxx)
set(ENV{F77} ${prefix}/bin/mpif77)
set(ENV{FC} ${prefix}/bin/mpifort)
set(autotools ${WORK_DIR}/autotools)
file(MAKE_DIRECTORY ${autotools})
file(COPY ${SOURCE} ${SOURCE_CXX} DESTINATION ${autotools})
get_filename_component(cxx_name ${SOURCE_CXX} NAME)
set(programs "hello hello_cxx")
set(fortran_ac "")
set(fortran_am "")
if(SOURCE_F77)
  file(COPY ${SOURCE_F77} DESTINATION ${autotools})
  get_filename_component(f77_name ${SOURCE_F77} NAME)
  set(programs "${programs} hello_f")
  set(fortran_ac "AC_PROG_F77\n")
  set(fortran_am "hello_f_SOURCES = ${f77_name}\n")
endif()
file(WRITE ${autotools}/configure.ac "AC_INIT([consumer], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\nAC_PROG_CXX\n${fortran_ac}AC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n")
file(WRITE ${autotools}/Makefile.am "bin_PROGRAMS = ${programs}\nhello_SOURCES = ${source_name}\nhello_cxx_SOURCES = ${cxx_name}\n${fortran_am}")
run(COMMAND autoreconf -i ${autotools})
execute_process(COMMAND ./configure WORKING_DIRECTORY ${autotools} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "CC=mpicc ./configure failed:\n${out}\n${err}")
endif()
run(COMMAND make -C ${autotools})
run_programs(${autotools})
set(cmake_cc ${WORK_DIR}/cmake_cc)
file(MAKE_DIRECTORY ${cmake_cc})
set(cmake_languages "C CXX")
set(cmake_fortran "")
if(SOURCE_F77)
  set(cmake_languages "C CXX Fortran")
  set(cmake_fortran "add_executable(hello_f ${SOURCE_F77})\n")
endif()
file(WRITE ${cmake_cc}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)\nproject(cc_is_mpicc ${cmake_languages})\nadd_executable(hello ${SOURCE})\nadd_executable(hello_cxx ${SOURCE_CXX})\n${cmake_fortran}")
run(COMMAND ${CMAKE_COMMAND} -S ${cmake_cc} -B ${cmake_cc}/build -G ${GENERATOR})
run(COMMAND ${CMAKE_COMMAND} --build ${cmake_cc}/build)
run_programs(${cmake_cc}/build)
foreach(variable CC CXX F77 FC)
  unset(ENV{${variable}})
endforeach()

# pkg-config: the flags it gives point into the moved prefix.
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run(COMMAND pkg-config --cflags --libs ftmpi EXPECT "-I${prefix}/lib/pkgconfig/../../include")
separate_arguments(flags UNIX_COMMAND "${output}")
run(COMMAND cc ${SOURCE} -o ${WORK_DIR}/hello_pc ${flags})
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_pc EXPECT "${expect}")
run(COMMAND pkg-config --cflags --libs ftmpi-cxx)
separate_arguments(flags UNIX_COMMAND "${output}")
run(COMMAND c++ ${SOURCE_CXX} -o ${WORK_DIR}/hello_cxx_pc ${flags})
run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/hello_cxx_pc EXPECT "${expect_cxx}")
if(SOURCE_F77)
  run(COMMAND pkg-config --cflags --libs ftmpi-fort EXPECT "-fallow-argument-mismatch")
  separate_arguments(flags UNIX_COMMAND "${output}")
  run(COMMAND gfortran ${SOURCE_F77} -o ${WORK_DIR}/f77_pc ${flags})
  run(COMMAND ${ftrun} -n 2 ${WORK_DIR}/f77_pc EXPECT "fortran_f77: 2 ranks passed")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
