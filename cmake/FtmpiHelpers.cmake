# Shared build rules: warnings for our own targets, and one-line registration of tests and benchmarks.

function(ftmpi_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
                              -Wcast-align -Wimplicit-fallthrough -Wformat=2>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic>
    $<$<BOOL:${FTMPI_WERROR}>:-Werror>)
  # GCC 12 reports -Wrestrict false positives inside std::string's operator+ at -O3 (GCC bug 105329).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
endfunction()

# ftmpi_library(NAME <name> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# A static library ftmpi_<name> (alias ftmpi::<name>) with public headers in include/.
function(ftmpi_library)
  cmake_parse_arguments(A "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(ftmpi_${A_NAME} STATIC ${A_SOURCES})
  add_library(ftmpi::${A_NAME} ALIAS ftmpi_${A_NAME})
  target_include_directories(ftmpi_${A_NAME} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
  target_link_libraries(ftmpi_${A_NAME} PUBLIC ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS})
  set_target_properties(ftmpi_${A_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  ftmpi_warnings(ftmpi_${A_NAME})
endfunction()

# ftmpi_unit_test(NAME <name> SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s])
# A Boost.Test executable registered with CTest; the main() is generated, so sources only define cases.
# LABELS defaults to "unit". Test cases print their random seed; FTMPI_TEST_SEED replays one.
function(ftmpi_unit_test)
  cmake_parse_arguments(A "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  set(main ${CMAKE_CURRENT_BINARY_DIR}/${A_NAME}_main.cpp)
  file(CONFIGURE OUTPUT ${main} CONTENT
    "#define BOOST_TEST_MODULE ${A_NAME}\n#include <boost/test/unit_test.hpp>\n")
  add_executable(${A_NAME} ${main} ${A_SOURCES})
  target_link_libraries(${A_NAME} PRIVATE ${A_LIBS} ftmpi_test_support Boost::unit_test_framework)
  ftmpi_warnings(${A_NAME})
  add_test(NAME ${A_NAME} COMMAND ${A_NAME} --report_level=short --log_level=message)
  set_tests_properties(${A_NAME} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT})
endfunction()

# ftmpi_bench(NAME <name> SOURCES ... [LIBS ...]) — a benchmark program that prints a table.
function(ftmpi_bench)
  cmake_parse_arguments(A "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  target_link_libraries(${A_NAME} PRIVATE ${A_LIBS} ftmpi_bench_harness)
  ftmpi_warnings(${A_NAME})
endfunction()
