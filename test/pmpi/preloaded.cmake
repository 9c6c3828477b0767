# Runs an unmodified MPI program under mpiexec with libtopocoll_pmpi.so
# preloaded into the MPI processes only (mpiexec -x LD_PRELOAD=...: mpiexec
# itself is left alone) and TOPOCOLL_PMPI_STATS=1, then checks its output.
#   cmake -DMPIEXEC=... -DNP=4 -DLIB=.../libtopocoll_pmpi.so -DWORKDIR=...
#         -DPROGRAM=hpcc|mpi4py [-DPYTHON=... -DSCRIPT=...] -P preloaded.cmake
# hpcc: runs in WORKDIR on a small hpccinf.txt written here (seconds), and
# passes when its own checks pass (HPL residual, PTRANS, MPIFFT,
# MPIRandomAccess). mpi4py: the script reports "mpi4py_check: ok". Both need
# "topocoll-pmpi: served=N" with N > 0.
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
set(flags --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -x LD_PRELOAD=${LIB}
          -x TOPOCOLL_PMPI_STATS=1)
if(PROGRAM STREQUAL "hpcc")
  file(READ /usr/share/doc/hpcc/examples/_hpccinf.txt inf)
  string(REGEX REPLACE "\n1000 +Ns" "\n200          Ns" inf "${inf}")
  string(REGEX REPLACE "\n80 +NBs" "\n40           NBs" inf "${inf}")
  file(WRITE ${WORKDIR}/hpccinf.txt "${inf}")
  set(cmd hpcc)
else()
  set(cmd ${PYTHON} ${SCRIPT})
endif()
execute_process(COMMAND ${MPIEXEC} -n ${NP} ${flags} ${cmd} WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "topocoll-pmpi: served=([0-9]+) fallback=([0-9]+)")
  message(FATAL_ERROR "no statistics line")
endif()
if(CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "topocoll served no call")
endif()
message("served ${CMAKE_MATCH_1}, fallback ${CMAKE_MATCH_2}")
if(PROGRAM STREQUAL "hpcc")
  file(READ ${WORKDIR}/hpccoutf.txt res)
  foreach(want IN ITEMS "\nSuccess=1\n" "\nPTRANS_residual=0\n" "\nMPIRandomAccess_ErrorsFraction=0\n"
                        "PASSED" "0 tests completed and failed residual checks")
    string(FIND "${res}" "${want}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "hpccoutf.txt lacks '${want}'")
    endif()
  endforeach()
  if(res MATCHES "FAILED")
    message(FATAL_ERROR "hpccoutf.txt reports a failed check")
  endif()
  # MPIFFT: HPCC prints the largest error of the inverse transform.
  if(NOT res MATCHES "\nMPIFFT_maxErr=([0-9.e+-]+)\n" OR CMAKE_MATCH_1 GREATER 1e-10)
    message(FATAL_ERROR "MPIFFT_maxErr missing or too large")
  endif()
  message("hpcc: HPL, PTRANS, MPIRandomAccess, MPIFFT (maxErr ${CMAKE_MATCH_1}) passed")
elseif(NOT out MATCHES "mpi4py_check: ok")
  message(FATAL_ERROR "the mpi4py program reports failures")
endif()
