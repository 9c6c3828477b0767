# cmake -P cmake/check_architecture.cmake -DROOT=<dir holding include/topocoll>
#
# The include graph's layering, checked on every #include "..." (and
# #include <topocoll/...>) in include/topocoll/**:
#
#   collectives -> plan -> kernels -> topology -> core
#   transport/**  a leaf beside them: includes core/ and itself only
#   model/**      a leaf beside them: includes anything but transport/
#
# so that a transport stays small enough to write one's own from core/
# (concepts.hpp is the contract), and the algorithms never depend on a
# particular transport or on the model that simulates them. transport/ is one
# leaf however deep: transport/mpi/*.hpp and transport/loopback/*.hpp may
# include each other. A new top-level directory or header fails until it is
# given a row in _allowed below, so that the rule is decided, not defaulted.
#
# It also checks that every header opens namespace topocoll inside the
# inline ABI namespace of version.hpp; that a kernel file's detail namespace
# is named after the file (kernels/pipeline.hpp holds detail::pipeline), and a
# plan file's after the kernel file it prices (plan/pipeline.hpp holds
# detail::plan::pipeline), so a qualified name says where it is defined; and
# that no header declares a namespace alias.
#
# Prints each forbidden arrow as "file: #include "x" (layer a -> layer b)" and
# fails if there is any.
cmake_minimum_required(VERSION 3.21)  # IN_LIST, file(RELATIVE_PATH)
if(NOT ROOT)
  get_filename_component(ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(_base "${ROOT}/include/topocoll")
if(NOT IS_DIRECTORY "${_base}")
  message(FATAL_ERROR "check_architecture: no ${_base}")
endif()

# layer -> the layers it may include. Top-level headers are layers of their
# own: the umbrellas, and version.hpp, which anyone may include.
set(_allowed_core core version)
set(_allowed_topology topology core version)
set(_allowed_kernels kernels topology core version)
set(_allowed_collectives collectives plan kernels topology core version)
set(_allowed_plan plan kernels topology core version)
set(_allowed_transport transport core version)
set(_allowed_model model collectives.hpp collectives plan kernels topology core version)
set(_allowed_version version)  # includes nothing of ours today
# <topocoll/collectives.hpp>: the collectives alone, for a transport of one's
# own, so it is held to the collectives' rule.
set(_allowed_collectives.hpp collectives plan kernels topology core version)
# <topocoll/persistent.hpp>: the persistent collectives, which describe their
# plan by running the model on their own schedule: above the collectives and
# the model.
set(_allowed_persistent.hpp collectives plan model topology core version)
# <topocoll/topocoll.hpp>: the umbrella, everything.
set(_allowed_topocoll.hpp collectives.hpp collectives plan kernels topology core transport model
    persistent.hpp version)
# Explicit exceptions to the rule above, as "from/file.hpp|to/file.hpp"
# (paths relative to include/topocoll), each with the reason. None today.
set(_exceptions)

function(_layer_of rel out)
  if(rel MATCHES "^([^/]+)/")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  elseif(rel STREQUAL "version.hpp")
    set(${out} version PARENT_SCOPE)
  else()
    set(${out} "${rel}" PARENT_SCOPE)
  endif()
endfunction()

file(GLOB_RECURSE _headers RELATIVE "${_base}" "${_base}/*.hpp")
list(SORT _headers)
set(_violations 0)
set(_arrows 0)
foreach(_from IN LISTS _headers)
  _layer_of("${_from}" _from_layer)
  if(NOT DEFINED _allowed_${_from_layer})
    message(NOTICE "check_architecture: include/topocoll/${_from}: layer '${_from_layer}' has no rule; "
                   "add _allowed_${_from_layer} to cmake/check_architecture.cmake")
    math(EXPR _violations "${_violations} + 1")
    continue()
  endif()
  # Every namespace opened is inside the inline ABI namespace (version.hpp).
  file(STRINGS "${_base}/${_from}" _opens REGEX "^namespace topocoll[ :{]")
  foreach(_open IN LISTS _opens)
    if(NOT _open MATCHES "^namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE[ :]")
      message(NOTICE "check_architecture: include/topocoll/${_from}: '${_open}' is outside "
                     "the ABI namespace; open namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE")
      math(EXPR _violations "${_violations} + 1")
    endif()
  endforeach()
  get_filename_component(_stem "${_from}" NAME_WE)
  foreach(_open IN LISTS _opens)
    if(_from_layer STREQUAL "kernels" AND _open MATCHES "::detail::([a-z_0-9]+)"
       AND NOT CMAKE_MATCH_1 STREQUAL _stem)
      message(NOTICE "check_architecture: include/topocoll/${_from}: opens detail::${CMAKE_MATCH_1}; "
                     "a kernel file holds detail::${_stem}, or its code moves to ${CMAKE_MATCH_1}.hpp")
      math(EXPR _violations "${_violations} + 1")
    endif()
    if(_from_layer STREQUAL "plan" AND NOT _open MATCHES "::detail::plan::${_stem} {")
      message(NOTICE "check_architecture: include/topocoll/${_from}: '${_open}'; "
                     "a plan file holds detail::plan::${_stem}, the plan of kernels/${_stem}.hpp")
      math(EXPR _violations "${_violations} + 1")
    endif()
  endforeach()
  file(STRINGS "${_base}/${_from}" _aliases REGEX "^[ \t]*namespace [A-Za-z_0-9]+ *=")
  foreach(_alias IN LISTS _aliases)
    string(STRIP "${_alias}" _alias)
    message(NOTICE "check_architecture: include/topocoll/${_from}: '${_alias}' is a namespace "
                   "alias; write the namespace's name")
    math(EXPR _violations "${_violations} + 1")
  endforeach()
  get_filename_component(_dir "${_base}/${_from}" DIRECTORY)
  file(STRINGS "${_base}/${_from}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*(\"|<topocoll/)")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      get_filename_component(_target "${_dir}/${CMAKE_MATCH_1}" ABSOLUTE)
    elseif(_line MATCHES "#[ \t]*include[ \t]*<topocoll/([^>]+)>")
      get_filename_component(_target "${_base}/${CMAKE_MATCH_1}" ABSOLUTE)
    else()
      continue()
    endif()
    string(STRIP "${_line}" _line)
    file(RELATIVE_PATH _to "${_base}" "${_target}")
    if(_to MATCHES "^\\.\\./")
      continue()  # outside include/topocoll: not ours to layer
    endif()
    if(NOT EXISTS "${_target}")
      message(NOTICE "check_architecture: include/topocoll/${_from}: ${_line} names no file")
      math(EXPR _violations "${_violations} + 1")
      continue()
    endif()
    math(EXPR _arrows "${_arrows} + 1")
    _layer_of("${_to}" _to_layer)
    if(NOT _to_layer IN_LIST _allowed_${_from_layer} AND NOT "${_from}|${_to}" IN_LIST _exceptions)
      list(JOIN _allowed_${_from_layer} ", " _may)
      message(NOTICE "check_architecture: include/topocoll/${_from}: ${_line} (${_from_layer} -> "
                     "${_to_layer}: forbidden; ${_from_layer} may include only ${_may})")
      math(EXPR _violations "${_violations} + 1")
    endif()
  endforeach()
endforeach()

list(LENGTH _headers _count)
if(_violations GREATER 0)
  message(FATAL_ERROR "check_architecture: ${_violations} violation(s) in ${_count} headers")
endif()
message(STATUS "check_architecture: ${_arrows} includes in ${_count} headers follow the layering")
