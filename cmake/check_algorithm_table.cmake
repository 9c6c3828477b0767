# cmake -DMODEL=<topocoll-model> -DDOC=<page> -P check_algorithm_table.cmake
#
# Holds the table of doc/algorithms.md to the library's algorithm table
# (core/algorithm_table.hpp): between the page's markers must stand exactly
# what `topocoll-model --algorithms` prints.
cmake_minimum_required(VERSION 3.21)
execute_process(COMMAND ${MODEL} --algorithms RESULT_VARIABLE _rc OUTPUT_VARIABLE _table
                ERROR_VARIABLE _error)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "topocoll-model --algorithms failed (${_rc}): ${_error}")
endif()
file(READ ${DOC} _text)
set(_begin "<!-- topocoll-model --algorithms -->\n")
string(FIND "${_text}" "${_begin}${_table}<!-- end -->" _at)
if(_at EQUAL -1)
  # Indented lines reach the reader (and the self-test's expectation) unwrapped.
  message(FATAL_ERROR "${DOC} does not match the library:\n"
                      "  its algorithm table differs from the library's; put what "
                      "`topocoll-model --algorithms` prints between its markers")
endif()
