# cmake -DSOURCE_DIR=<repository> -DMODEL=<topocoll-model> [-DDOC=<page>]
#       -P check_learning_path.cmake
#
# Holds doc/learning_path.md to the code:
#  * every "`topocoll-model ARGS` (N)" runs, and predicts time N;
#  * every `snake_case` name is a test case in test/*.cpp, an algorithm
#    (core/options.hpp) or a collective (a "void <name>(" in collectives/);
#  * every picture and page it links exists.
# Fails naming each one that does not. DOC (default doc/learning_path.md)
# lets the self-test run it on a page with one of each mistake.
cmake_minimum_required(VERSION 3.21)
if(NOT DOC)
  set(DOC ${SOURCE_DIR}/doc/learning_path.md)
endif()
get_filename_component(_doc_dir ${DOC} DIRECTORY)
file(READ ${DOC} _text)
set(_errors "")

string(REGEX MATCHALL "`topocoll-model [^`]*` \\([0-9]+" _runs "${_text}")
list(LENGTH _runs _run_count)
if(_run_count EQUAL 0)
  string(APPEND _errors "  no \"`topocoll-model ...` (time)\" found: the check checks nothing\n")
endif()
foreach(_run IN LISTS _runs)
  string(REGEX REPLACE "^`topocoll-model ([^`]*)` \\(([0-9]+)$" "\\1" _args "${_run}")
  string(REGEX REPLACE "^`topocoll-model ([^`]*)` \\(([0-9]+)$" "\\2" _time "${_run}")
  separate_arguments(_argv UNIX_COMMAND "${_args}")
  execute_process(COMMAND ${MODEL} ${_argv} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "\n  time ${_time}\n")
    string(APPEND _errors "  topocoll-model ${_args}: the page says ${_time}, the program:\n${_out}\n")
  endif()
endforeach()

file(GLOB _sources ${SOURCE_DIR}/test/*.cpp)
set(_cases "")
foreach(_source IN LISTS _sources)
  file(READ ${_source} _src)
  string(REGEX MATCHALL "BOOST_AUTO_TEST_CASE(_TEMPLATE)?\\([ \t\r\n]*[a-z0-9_]+" _found "${_src}")
  foreach(_case IN LISTS _found)
    string(REGEX REPLACE "^.*\\([ \t\r\n]*" "" _case "${_case}")
    list(APPEND _cases ${_case})
  endforeach()
endforeach()
file(READ ${SOURCE_DIR}/include/topocoll/core/options.hpp _options)
file(GLOB _headers ${SOURCE_DIR}/include/topocoll/collectives/*.hpp)
set(_collectives "")
foreach(_header IN LISTS _headers)
  file(READ ${_header} _src)
  string(APPEND _collectives "${_src}")
endforeach()
string(REGEX MATCHALL "`[a-z0-9]+(_[a-z0-9]+)+`" _names "${_text}")
list(REMOVE_DUPLICATES _names)
foreach(_name IN LISTS _names)
  string(REPLACE "`" "" _name "${_name}")
  if(NOT _name IN_LIST _cases AND NOT _options MATCHES "\"${_name}\""
     AND NOT _collectives MATCHES "\nvoid ${_name}\\(")
    string(APPEND _errors "  `${_name}` is no test case, algorithm or collective\n")
  endif()
endforeach()

# (A match may not hold "[" or "]": CMake would not split the list there.)
string(REGEX MATCHALL "\\((img/[^)]+|[a-z_]+\\.md)" _links "${_text}")
foreach(_link IN LISTS _links)
  string(SUBSTRING "${_link}" 1 -1 _path)
  if(NOT EXISTS ${_doc_dir}/${_path})
    string(APPEND _errors "  the link ${_path} leads nowhere\n")
  endif()
endforeach()

if(_errors)
  message(FATAL_ERROR "${DOC} does not match the code:\n${_errors}")
endif()
message(STATUS "${DOC}: ${_run_count} predictions, every name and link checked")
