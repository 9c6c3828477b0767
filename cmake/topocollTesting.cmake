# topocoll_add_mpi_test(<target> RANKS <n>... [TIMEOUT <s>] [ARGS <arg>...]
#                       [SUFFIX <s>] [ENV <VAR=value>...] [PASS <regex>] [LABELS <l>...])
#
# Adds one ctest per rank count, "<target><SUFFIX>.np<n>", running the target
# through mpiexec, with ENV set, labelled mpi (and LABELS); PASS: the test
# passes when its output matches the regex, whatever the exit code. With Open
# MPI the run is oversubscribed, unbound and yielding (a laptop or CI box has
# fewer cores than ranks), allowed as root, and has its own session directory
# (topocoll_mpi_session_dir).
#
# topocoll_mpi_session_dir(<test>...)
#
# Gives each Open MPI test its own session directory, <build>/mpi-session/<test>,
# made at configure time, so that mpiexec creates no directory another test
# shares. With the default (/tmp/ompi.<host>.<uid>, one for all), two mpiexec
# that start at once race to create it, and one fails before its program runs:
# "A call to mkdir was unable to create the desired directory ... File exists".
include_guard(GLOBAL)

function(topocoll_mpi_session_dir)
  foreach(test IN LISTS ARGN)
    set(dir ${CMAKE_BINARY_DIR}/mpi-session/${test})
    file(MAKE_DIRECTORY ${dir})
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT OMPI_MCA_orte_tmpdir_base=${dir})
  endforeach()
endfunction()

function(topocoll_add_mpi_test target)
  cmake_parse_arguments(ARG "" "TIMEOUT;SUFFIX;PASS" "RANKS;ARGS;ENV;LABELS" ${ARGN})
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1 2 3 4 5 8)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    find_package(MPI COMPONENTS CXX REQUIRED)
  endif()
  if(NOT DEFINED TOPOCOLL_MPIEXEC_IS_OPENMPI)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _v ERROR_VARIABLE _v)
    if(_v MATCHES "Open MPI|OpenRTE")
      set(TOPOCOLL_MPIEXEC_IS_OPENMPI ON CACHE INTERNAL "")
    else()
      set(TOPOCOLL_MPIEXEC_IS_OPENMPI OFF CACHE INTERNAL "")
    endif()
  endif()
  set(flags ${MPIEXEC_PREFLAGS})
  set(env ${ARG_ENV})
  if(TOPOCOLL_MPIEXEC_IS_OPENMPI)
    list(APPEND flags --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
    list(APPEND env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
  endif()
  # Under AddressSanitizer, LeakSanitizer reports Open MPI's own allocations
  # (from components it has already dlclose'd, so they cannot be suppressed by
  # name): leak checking is off for MPI runs; every other ASan check stays on.
  if(CMAKE_CXX_FLAGS MATCHES "sanitize=[a-z,]*address")
    list(APPEND env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  endif()
  foreach(n IN LISTS ARG_RANKS)
    set(test ${target}${ARG_SUFFIX}.np${n})
    add_test(NAME ${test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${flags}
                     $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${ARG_ARGS})
    # A run of two or more ranks takes both cores a CI box has; one rank, one.
    set(procs 2)
    if(n EQUAL 1)
      set(procs 1)
    endif()
    set_tests_properties(${test} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${procs}
                         ENVIRONMENT "${env}" LABELS "mpi;${ARG_LABELS}")
    if(ARG_PASS)
      set_tests_properties(${test} PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_PASS}")
    endif()
    if(TOPOCOLL_MPIEXEC_IS_OPENMPI)
      topocoll_mpi_session_dir(${test})
    endif()
  endforeach()
endfunction()
