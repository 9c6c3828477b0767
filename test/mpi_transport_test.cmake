# The Boost.MPI transport's own suite (included by test/CMakeLists.txt when MPI
# tests are on). Built like topocoll_suite's MPI variant: the MPI runner in
# support/mpi_runner.hpp provides main.
add_executable(mpi_transport_test mpi_transport_test.cpp)
target_link_libraries(mpi_transport_test PRIVATE topocoll::mpi Boost::unit_test_framework
                      topocoll_test_assertions)
target_compile_definitions(mpi_transport_test PRIVATE BOOST_TEST_DYN_LINK BOOST_TEST_NO_MAIN
                                                      TOPOCOLL_TEST_MPI)
target_include_directories(mpi_transport_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
topocoll_add_mpi_test(mpi_transport_test RANKS 1 2 3 4 5 8 TIMEOUT 600
                      ARGS --log_level=warning --report_level=short)
# The same with every wait timed (TOPOCOLL_TIMEOUT): the polling receive and
# the tested sends keep the size checks and the results of the untimed calls.
topocoll_add_mpi_test(mpi_transport_test RANKS 4 SUFFIX .timed TIMEOUT 600
                      ENV TOPOCOLL_TIMEOUT=120 ARGS --log_level=warning --report_level=short)
# The same with fewer messages received without a probe
# (mpi::options::small_message_bytes = 1024, 4000 by default): markers before
# messages of 1025 bytes, untimed and timed. The message above 2^31 bytes
# goes after a marker under either setting, and is the suite's longest case
# (10 of 13 s at np 2): the runs above send it.
set(_small_args --log_level=warning --report_level=short
                --run_test=!a_message_above_2_to_the_31_bytes_travels_intact)
topocoll_add_mpi_test(mpi_transport_test RANKS 2 3 SUFFIX .small TIMEOUT 600
                      ENV TOPOCOLL_SMALL_MESSAGE_BYTES=1024 ARGS ${_small_args})
topocoll_add_mpi_test(mpi_transport_test RANKS 3 SUFFIX .small_timed TIMEOUT 600
                      ENV TOPOCOLL_SMALL_MESSAGE_BYTES=1024 TOPOCOLL_TIMEOUT=120
                      ARGS ${_small_args})
