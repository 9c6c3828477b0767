# The MPI suites across hosts (label multihost): scripts/netns-cluster starts
# network namespaces as hosts, runs a suite over TCP at np 4 on 2 hosts and at
# np 8 on 4 hosts, and tears them down. Where it cannot (no root, no network
# namespaces) it says why and exits 77: the test is reported as skipped.
# The script's own limit stays below ctest's, so that it always tears down.
set(_cluster ${PROJECT_SOURCE_DIR}/scripts/netns-cluster)

# topocoll_multihost_test(<name> HOSTS <n> NP <p> [TIMEOUT <s>] [PASS <regex>]
#                         [CLUSTER <arg>...] COMMAND <program> <arg>...)
function(topocoll_multihost_test name)
  cmake_parse_arguments(ARG "" "HOSTS;NP;TIMEOUT;PASS" "CLUSTER;COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(test multihost.${name}.np${ARG_NP})
  add_test(NAME ${test}
           COMMAND ${_cluster} --hosts ${ARG_HOSTS} --np ${ARG_NP} --timeout ${ARG_TIMEOUT}
                   ${ARG_CLUSTER} -- ${ARG_COMMAND})
  math(EXPR ctest_limit "${ARG_TIMEOUT} + 30")
  # One cluster at a time (ctest -j4 and more): with two at once, on two
  # cores, a fault test's ranks waited 72 s for a 2 s timeout.
  set_tests_properties(${test} PROPERTIES LABELS multihost SKIP_RETURN_CODE 77 PROCESSORS 2
                                          RESOURCE_LOCK netns_cluster TIMEOUT ${ctest_limit})
  if(ARG_PASS)
    set_tests_properties(${test} PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_PASS}")
  endif()
endfunction()

foreach(suite IN ITEMS ${TOPOCOLL_MULTIHOST_SUITES})
  foreach(shape IN ITEMS "2;4" "4;8")
    list(GET shape 0 hosts)
    list(GET shape 1 np)
    topocoll_multihost_test(${suite} HOSTS ${hosts} NP ${np}
                            COMMAND $<TARGET_FILE:${suite}> --log_level=warning --report_level=short)
  endforeach()
endforeach()

# A link of one host goes down in the middle of a collective: the ranks that
# wait on it get timeout_error (2 s) and say so; the job cannot end by itself
# (mpirun has lost that host's daemon), so the script ends it 8 s later.
topocoll_multihost_test(
  fault_test.link_down HOSTS 2 NP 4 TIMEOUT 90
  CLUSTER --link-down 2 --when "collectives running" --grace 8
  COMMAND env TOPOCOLL_TEST_MPI_WAIT=5 $<TARGET_FILE:fault_test> --run_test=a_link_that_goes_down
  PASS "rank [0-9] got timeout_error: topocoll::all_reduce on rank [0-9] of 4: timed out after [0-9.]+ s waiting for a message from rank [0-9]")
