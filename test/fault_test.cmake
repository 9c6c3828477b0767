# Faults on the MPI transport (included by test/CMakeLists.txt when MPI tests
# are on): timeouts and agreement checks, built like mpi_transport_test.
add_executable(fault_test fault_test.cpp)
target_link_libraries(fault_test PRIVATE topocoll::mpi Boost::unit_test_framework
                      topocoll_test_assertions)
target_compile_definitions(fault_test PRIVATE BOOST_TEST_DYN_LINK BOOST_TEST_NO_MAIN
                                              TOPOCOLL_TEST_MPI)
target_include_directories(fault_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
topocoll_add_mpi_test(fault_test RANKS 1 2 3 4 8 TIMEOUT 120
                      ARGS --log_level=warning --report_level=short)
# A rank throws in the middle of a collective: the runner ends the job with
# MPI_Abort and that rank's message once TOPOCOLL_TEST_MPI_GRACE (3 s) passed.
topocoll_add_mpi_test(
  fault_test RANKS 4 SUFFIX .rank_throws TIMEOUT 60 ENV TOPOCOLL_TEST_MPI_GRACE=3
  ARGS --run_test=a_rank_that_throws_mid_collective
  PASS "rank 1, [^\n]*a_rank_that_throws_mid_collective: this rank threw[^\n]*\n[^\n]*rank 1's operator fails at its first element[^$]*Calling MPI_Abort")
