// Linked into every Boost.Test suite (test/CMakeLists.txt): an assertion made
// on any thread but the test's own ends the suite at once, failing, and names
// the test.
//
// Boost.Test is not thread-safe (harness.hpp): a rank that is a thread
// records what it saw (a tc_test::Check, or a slot of its own), and the test
// asserts after the ranks have joined. An assertion on a rank's thread is a
// data race in Boost.Test's log, which ThreadSanitizer reports only in the
// runs where it happens to see both writes, and only in the suites it runs;
// this observer makes every such assertion fail, in every build.

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

struct assertions_on_main_thread final : boost::unit_test::test_observer {
  const std::thread::id test_thread = std::this_thread::get_id();

  void assertion_result(boost::unit_test::assertion_result) override {
    if (std::this_thread::get_id() == test_thread) return;
    const std::string test = boost::unit_test::framework::current_test_case().full_name();
    std::fprintf(stderr,
                 "%s: a Boost.Test assertion ran on a thread other than the test's own. "
                 "Boost.Test is not thread-safe: let the ranks record what they see (a "
                 "tc_test::Check, or a slot per rank) and assert after they have joined.\n",
                 test.c_str());
    std::fflush(stderr);
    std::_Exit(EXIT_FAILURE);  // not abort(): Boost.Test would catch the signal on its own thread
  }
};

struct observe_assertions {
  assertions_on_main_thread observer;
  observe_assertions() { boost::unit_test::framework::register_observer(observer); }
  ~observe_assertions() { boost::unit_test::framework::deregister_observer(observer); }
};

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(observe_assertions);
