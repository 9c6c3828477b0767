#pragma once
// The words of the loopback transport's reports (deadlock_error, a message
// never received): ranks of a sub-communicator are named with their rank in
// the parent, "rank 1 (rank 3 of the parent)" (doc/transports.md, "split").

#include <cstddef>
#include <string>
#include <vector>

#include "../../core/errors.hpp"
#include "../../version.hpp"
#include "mailbox.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail {

using topocoll::detail::concat;

// The communicator of context 2(i + 1) is groups[i]; context 0 is the run's,
// and context + 1 carries the splits of the communicator of `context`.
class reports {
 public:
  explicit reports(const std::vector<group_ptr>& groups) : groups_(groups) {}

  // Run rank r as a rank of the communicator of `context`.
  std::string who(int context, int r) const {
    if (context < 2) return concat("rank ", r);
    const group& g = *groups_[static_cast<std::size_t>(context / 2 - 1)];
    const int i = g.rank_of(r);
    return concat("rank ", i, " (rank ", g.parent[static_cast<std::size_t>(i)], " of the parent)");
  }

  // "rank 0 waits in recv from rank 1, tag 9"
  std::string waits(int r, const wait_for& w, bool peer_finished) const {
    const int c = w.context;
    return concat(who(c, r), c % 2 ? " waits in " + control(c, w.tag) + ", in " : " waits in ",
                  w.kind == wait_kind::recv ? "recv from " : "send to ", who(c, w.peer),
                  tag_text(c, w.tag, ", tag "), peer_finished ? " (which has returned)" : "");
  }

  // The message_error of a message still in a mailbox once every rank returned.
  [[noreturn]] void never_received(const envelope& e, const char* why) const {
    const int c = e.context;
    throw message_error(concat("loopback::run: a message from ", who(c, e.src), " to ",
                               who(c, e.dest), tag_text(c, e.tag, " with tag "),
                               c % 2 ? " in " + control(c, e.tag) : "", " (", e.count,
                               " elements of ", e.type->name(), ") was never received", why));
  }

 private:
  // What a communicator's own traffic (on context c, odd) is doing.
  static std::string control(int c, int tag) {
    return (tag == agreement_tag ? "the agreement check" : "split") + sub(c, " of");
  }
  static std::string sub(int context, const char* lead) {
    return context < 2 ? "" : concat(lead, " sub-communicator ", context / 2);
  }
  // ", tag 9, on sub-communicator 1"; the splits' own tag says nothing
  static std::string tag_text(int context, int tag, const char* lead) {
    return context % 2 ? "" : concat(lead, tag, sub(context, ", on"));
  }

  const std::vector<group_ptr>& groups_;
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::loopback::detail
