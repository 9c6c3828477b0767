# The adapter's Fortran bindings (pmpi/fortran.cpp) under Fortran programs:
# fortran_test.f90 and fortran_nonblocking_test.f90 through `use mpi` (the
# mpif.h symbols) and
# fortran_f08_test.f90 through `use mpi_f08`, at np 1 2 3 4 5 8. Built only
# when CMake finds a Fortran compiler and MPI's Fortran bindings (Debian:
# gfortran, installed by scripts/install-deps). Included from CMakeLists.txt,
# whose _sanitize flags it reuses: gfortran takes the same ones.
include(CheckLanguage)
check_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER)
  message(STATUS "topocoll: no Fortran compiler; the PMPI Fortran tests are not built")
  return()
endif()
enable_language(Fortran)
find_package(MPI COMPONENTS Fortran)
if(NOT MPI_Fortran_FOUND)
  message(STATUS "topocoll: no MPI Fortran bindings; the PMPI Fortran tests are not built")
  return()
endif()

# check(), shared by the programs; its module file in a directory of its own.
add_library(pmpi_fortran_check OBJECT fortran_check.f90)
set_target_properties(pmpi_fortran_check PROPERTIES
  Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fortran_check)
target_include_directories(pmpi_fortran_check PUBLIC ${CMAKE_CURRENT_BINARY_DIR}/fortran_check)
target_compile_options(pmpi_fortran_check PRIVATE -Wall ${_sanitize})

# pmpi_<name>[.<suffix>].np<n>: passes when no rank prints FAILED and the
# statistics line matches <pass>.
function(topocoll_pmpi_fortran_test name)
  cmake_parse_arguments(ARG "" "SUFFIX;PASS" "RANKS;ARGS" ${ARGN})
  if(NOT TARGET pmpi_${name})
    add_executable(pmpi_${name} ${name}.f90)
    target_link_libraries(pmpi_${name} PRIVATE pmpi_fortran_check topocoll_pmpi MPI::MPI_Fortran)
    target_compile_options(pmpi_${name} PRIVATE -Wall ${_sanitize})
    # A `use mpi_f08` program calls none of the library's symbols itself
    # (mpi_allreduce_f08_ calls ompi_allreduce_f): --as-needed, Debian's
    # default, would drop it.
    target_link_options(pmpi_${name} PRIVATE ${_sanitize} LINKER:--no-as-needed)
  endif()
  topocoll_add_mpi_test(pmpi_${name} RANKS ${ARG_RANKS} SUFFIX "${ARG_SUFFIX}" TIMEOUT 300
                        ARGS ${ARG_ARGS} ENV TOPOCOLL_PMPI_STATS=2 PASS "${ARG_PASS}")
  foreach(n IN LISTS ARG_RANKS)
    set_tests_properties(pmpi_${name}${ARG_SUFFIX}.np${n} PROPERTIES
      FAIL_REGULAR_EXPRESSION "FAILED;topocoll-pmpi: MPI_[A-Za-z_]+ on rank")
  endforeach()
endfunction()

set(_served "topocoll-pmpi: served=[1-9][0-9]* fallback=0\n")
topocoll_pmpi_fortran_test(fortran_test RANKS 1 2 3 4 5 8 PASS "${_served}")
topocoll_pmpi_fortran_test(fortran_f08_test RANKS 1 2 3 4 5 8
  PASS "${_served}.*MPI_Ibcast served=[1-9].*MPI_Iallreduce served=[1-9].*MPI_Igather served=[1-9]")
# The nonblocking collectives from `use mpi`: each one must be served (the
# statistics list the functions in the library's order).
set(_nonblocking_served "${_served}.*MPI_Ibcast served=[1-9].*MPI_Ireduce served=[1-9]")
string(APPEND _nonblocking_served ".*MPI_Iallreduce served=[1-9].*MPI_Iallgather served=[1-9]")
string(APPEND _nonblocking_served
       ".*MPI_Ireduce_scatter_block served=[1-9].*MPI_Ireduce_scatter served=[1-9]")
string(APPEND _nonblocking_served
       ".*MPI_Iscan served=[1-9].*MPI_Iexscan served=[1-9].*MPI_Iscatter served=[1-9]")
string(APPEND _nonblocking_served
       ".*MPI_Igather served=[1-9].*MPI_Ialltoall served=[1-9].*MPI_Ialltoallv served=[1-9]")
topocoll_pmpi_fortran_test(fortran_nonblocking_test RANKS 1 2 3 4 5 8 PASS "${_nonblocking_served}")
# The same with the progress thread (TOPOCOLL_PMPI_PROGRESS=thread), which
# Fortran's MPI_INIT starts as C's does.
topocoll_pmpi_fortran_test(fortran_nonblocking_test SUFFIX .progress_thread RANKS 2 3
  PASS "${_served}topocoll-pmpi: progress thread: [1-9][0-9]* calls handed over\n.*MPI_Ialltoallv served=[1-9]")
foreach(n IN ITEMS 2 3)
  set_property(TEST pmpi_fortran_nonblocking_test.progress_thread.np${n} APPEND PROPERTY
               ENVIRONMENT TOPOCOLL_PMPI_PROGRESS=thread)
endforeach()
# An operation from Fortran's MPI_Op_create goes to MPI on every rank.
topocoll_pmpi_fortran_test(fortran_test SUFFIX .userop RANKS 1 4 5 ARGS userop
  PASS "served=0 fallback=[1-9][0-9]*\n.*MPI_Allreduce fallback\\(operation\\)=[1-9]")
