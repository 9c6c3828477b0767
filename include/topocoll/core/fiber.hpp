#pragma once
// A fiber's parts: its stack, where it stopped, and the switch between two
// such places; the stacks kept for the next fibers. The progress engine
// (progress.hpp) runs started collectives on them.

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "../version.hpp"
#include "spares.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool fibers_available = false;
#else
inline constexpr bool fibers_available = true;
#endif

// A stack for a fiber: mapped, with a guard page below it; kept by a
// persistent request from one start to the next.
class fiber_stack {
 public:
  static constexpr std::size_t bytes = std::size_t{1} << 20;  // committed as touched

  fiber_stack() {
    guard_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* p = ::mmap(nullptr, bytes + guard_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::mprotect(p, guard_, PROT_NONE);
    base_ = static_cast<std::byte*>(p);
  }
  ~fiber_stack() { ::munmap(base_, bytes + guard_); }
  fiber_stack(const fiber_stack&) = delete;
  fiber_stack& operator=(const fiber_stack&) = delete;

  void* bottom() const { return base_ + guard_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t guard_ = 0;
};

// Where a fiber (or the code that resumed it) stopped, and the switch
// between two such places. On x86-64 the switch saves the callee-saved
// registers and the floating-point control words on the stack it leaves and
// makes no system call; ucontext's swapcontext, used elsewhere, also saves
// and restores the signal mask, two system calls per switch.
#if defined(__x86_64__)
// Saves this stack's place in *from (rdi), continues at `to` (rsi).
[[gnu::naked, gnu::noinline]] inline void switch_stack(void** /*from*/, void* /*to*/) {
  asm("pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "subq $8, %rsp\n\t"
      "stmxcsr (%rsp)\n\t"
      "fnstcw 4(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\t"
      "fldcw 4(%rsp)\n\t"
      "addq $8, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret");
}

class fiber_context {
 public:
  // A place at the start of entry() on the stack [bottom, bottom + bytes):
  // the frame switch_stack pops (default control words, zero registers),
  // returning into entry as if called (entry never returns).
  void begin(void* bottom, std::size_t bytes, void (*entry)()) {
    auto top = (reinterpret_cast<std::uintptr_t>(bottom) + bytes) & ~std::uintptr_t{15};
    auto* frame = reinterpret_cast<std::uint64_t*>(top) - 9;
    frame[0] = 0x037Full << 32 | 0x1F80;        // mxcsr, then the x87 control word
    for (int i = 1; i <= 6; ++i) frame[i] = 0;  // r15 r14 r13 r12 rbx rbp
    frame[7] = reinterpret_cast<std::uint64_t>(entry);
    frame[8] = 0;  // entry's return address
    sp_ = frame;
  }
  // Saves the running code's place in `here` and continues at `there`.
  static void swap(fiber_context& here, const fiber_context& there) {
    switch_stack(&here.sp_, there.sp_);
  }

 private:
  void* sp_ = nullptr;
};
#else
class fiber_context {
 public:
  void begin(void* bottom, std::size_t bytes, void (*entry)()) {
    ::getcontext(&uc_);
    uc_.uc_stack.ss_sp = bottom;
    uc_.uc_stack.ss_size = bytes;
    uc_.uc_link = nullptr;
    ::makecontext(&uc_, entry, 0);
  }
  static void swap(fiber_context& here, fiber_context& there) {
    ::swapcontext(&here.uc_, &there.uc_);
  }

 private:
  ucontext_t uc_{};
};
#endif

// The stacks of finished fibers, kept for the next ones: a nonblocking call
// then maps no stack of its own. At most 8 per thread.
struct spare_stacks {
  using spares = thread_spares<fiber_stack, 8>;
  static std::unique_ptr<fiber_stack> take() {
    if (fiber_stack* st = spares::take()) return std::unique_ptr<fiber_stack>(st);
    return std::make_unique<fiber_stack>();
  }
  static void give(std::unique_ptr<fiber_stack> st) {
    if (spares::give(st.get())) st.release();  // else unmapped here
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
