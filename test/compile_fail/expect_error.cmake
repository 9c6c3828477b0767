# cmake -DCXX=<compiler> -DSOURCE=<file.cpp> -DINCLUDE=<dir> -DCASE=<macro>
#       -DEXPECT=<regex> [-DLINES=<n>] -P expect_error.cmake
#
# Compiles SOURCE with -DCASE and passes when the compile fails and EXPECT
# matches within the first LINES lines of the compiler's output: a readable
# message on line 200, after the template noise, is no better than none, so
# PASS_REGULAR_EXPRESSION alone (anywhere in the output) would not do.
cmake_minimum_required(VERSION 3.21)
if(NOT LINES)
  set(LINES 10)
endif()
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -fdiagnostics-color=never
                        "-I${INCLUDE}" "-D${CASE}" "${SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "expect_error: ${CASE} compiled; it must not")
endif()
# The first LINES lines, cut by position (a CMake list would split at ";").
set(_head "")
set(_rest "${_out}")
foreach(_i RANGE 1 ${LINES})
  string(FIND "${_rest}" "\n" _at)
  if(_at EQUAL -1)
    string(APPEND _head "${_rest}")
    break()
  endif()
  math(EXPR _next "${_at} + 1")
  string(SUBSTRING "${_rest}" 0 ${_next} _line)
  string(APPEND _head "${_line}")
  string(SUBSTRING "${_rest}" ${_next} -1 _rest)
endforeach()
if(NOT _head MATCHES "${EXPECT}")
  message(FATAL_ERROR "expect_error: ${CASE}: \"${EXPECT}\" is not in the first ${LINES} lines:\n"
                      "${_head}")
endif()
message(STATUS "expect_error: ${CASE}: the message is in the first ${LINES} lines")
