#pragma once
// TOPOCOLL_TEST_SUITE(name) ... BOOST_AUTO_TEST_SUITE_END(): a Boost.Test suite
// named after a collective, so that `one_to_all_test --run_test=broadcast`
// runs that collective's tests (test/README.md has the table).
//
// Why not BOOST_AUTO_TEST_SUITE(broadcast): it opens `namespace broadcast`,
// and the test files say `using namespace topocoll;` and call
// broadcast<Topo>(...) unqualified, which the namespace would make ambiguous.
// This opens `namespace broadcast_suite` and registers the suite as
// "broadcast", the way BOOST_AUTO_TEST_SUITE does (Boost 1.74's
// unit_test_suite.hpp). A suite opened twice is one suite, so the tests stay
// where they are in their file.

#include <boost/test/unit_test.hpp>

#define TOPOCOLL_TEST_SUITE(name)         \
  namespace name##_suite {                \
    BOOST_AUTO_TU_REGISTRAR(name##_suite) \
    (#name, __FILE__, __LINE__, boost::unit_test::decorator::collector_t::instance());
