# Runs pmpi_fuzz twice under mpiexec, natively and with libtopocoll_pmpi.so
# preloaded into the MPI processes (mpiexec -x LD_PRELOAD=...), and compares
# every rank's lines: a hash of each receive buffer and each error class. The
# preloaded run must have served calls (TOPOCOLL_PMPI_STATS=1).
#   cmake -DMPIEXEC=... -DNP=4 -DLIB=.../libtopocoll_pmpi.so -DFUZZ=.../pmpi_fuzz
#         -DWORKDIR=... "-DARGS=--seed|7|--iterations|200|--corpus|file" -P pmpi_fuzz.cmake
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
set(flags --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
foreach(run IN ITEMS native topocoll)
  set(pre "")
  if(run STREQUAL "topocoll")
    set(pre -x LD_PRELOAD=${LIB} -x TOPOCOLL_PMPI_STATS=1)
  endif()
  execute_process(COMMAND ${MPIEXEC} -n ${NP} ${flags} ${pre} ${FUZZ} ${args} --out ${WORKDIR}/${run}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("${run}: ${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pmpi_fuzz ${run} run: exit code ${rc}")
  endif()
  if(run STREQUAL "topocoll" AND NOT "${out}${err}" MATCHES "topocoll-pmpi: served=[1-9]")
    message(FATAL_ERROR "pmpi_fuzz: the preloaded run served no call with topocoll")
  endif()
endforeach()
math(EXPR last "${NP} - 1")
set(cases 0)
foreach(r RANGE ${last})
  file(STRINGS ${WORKDIR}/native.${r} want)
  file(STRINGS ${WORKDIR}/topocoll.${r} got)
  list(LENGTH want n)
  list(LENGTH got n_got)
  if(NOT n EQUAL n_got)
    message(FATAL_ERROR "rank ${r}: ${n} cases natively, ${n_got} with topocoll")
  endif()
  math(EXPR cases "${cases} + ${n}")
  math(EXPR n "${n} - 1")
  foreach(i RANGE ${n})
    list(GET want ${i} w)
    list(GET got ${i} g)
    if(NOT w STREQUAL g)
      set(again "${ARGS}")  # a corpus entry: the same run repeats it
      if(w MATCHES "^case ([0-9]+) ")
        set(again "${ARGS}|--case|${CMAKE_MATCH_1}")
      endif()
      message(FATAL_ERROR "pmpi_fuzz: FAILED at np ${NP}, rank ${r}:\n  native:   ${w}\n  topocoll: ${g}\n"
                          "reproduce: cmake -DMPIEXEC=${MPIEXEC} -DNP=${NP} -DLIB=${LIB} -DFUZZ=${FUZZ} "
                          "-DWORKDIR=${WORKDIR} \"-DARGS=${again}\" -P ${CMAKE_CURRENT_LIST_FILE}")
    endif()
  endforeach()
endforeach()
message("pmpi_fuzz: ${cases} rank-cases byte-identical at np ${NP} (${ARGS})")
