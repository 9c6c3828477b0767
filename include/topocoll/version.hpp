#pragma once
// topocoll's version, for code that must tell releases apart at compile time:
//
//   #if TOPOCOLL_VERSION >= 100  // 0.1.0 and later
//
// TOPOCOLL_VERSION is major * 10000 + minor * 100 + patch, the scheme of
// {fmt}'s FMT_VERSION, so one integer comparison orders two releases.
// These numbers must equal project(topocoll VERSION ...) in CMakeLists.txt;
// the ctest "version_matches_cmake" (cmake/check_version.cmake) fails when
// they differ, so bump both together.

#define TOPOCOLL_VERSION_MAJOR 0
#define TOPOCOLL_VERSION_MINOR 1
#define TOPOCOLL_VERSION_PATCH 0

#define TOPOCOLL_VERSION \
  (TOPOCOLL_VERSION_MAJOR * 10000 + TOPOCOLL_VERSION_MINOR * 100 + TOPOCOLL_VERSION_PATCH)

// The inline ABI namespace: every header opens
// `namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {`, so that objects built
// against two ABI-incompatible releases fail to link instead of mixing
// silently, while users keep spelling topocoll::all_reduce (and specialize
// topocoll::is_commutative in namespace topocoll, as before). Change it
// (v0 -> v1) only with an ABI break.
#define TOPOCOLL_ABI_NAMESPACE v0
