# cmake -P cmake/check_version.cmake -DSOURCE_DIR=<repo root>
# Fails when include/topocoll/version.hpp and project(topocoll VERSION ...)
# in CMakeLists.txt disagree: the header is what users' #if tests see, the
# project version is what find_package(topocoll 0.1) sees, and a release that
# bumps one without the other lies to one of them.
cmake_minimum_required(VERSION 3.21)
if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()

file(READ "${SOURCE_DIR}/CMakeLists.txt" _lists)
if(NOT _lists MATCHES "project\\(topocoll[ \t\r\n]+VERSION[ \t\r\n]+([0-9]+)\\.([0-9]+)\\.([0-9]+)")
  message(FATAL_ERROR "check_version: no project(topocoll VERSION x.y.z) in ${SOURCE_DIR}/CMakeLists.txt")
endif()
set(_cmake_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")

file(READ "${SOURCE_DIR}/include/topocoll/version.hpp" _header)
set(_parts)
foreach(_part IN ITEMS MAJOR MINOR PATCH)
  if(NOT _header MATCHES "#define TOPOCOLL_VERSION_${_part}[ \t]+([0-9]+)")
    message(FATAL_ERROR "check_version: no #define TOPOCOLL_VERSION_${_part} in version.hpp")
  endif()
  list(APPEND _parts "${CMAKE_MATCH_1}")
endforeach()
list(JOIN _parts "." _header_version)

if(NOT _header_version STREQUAL _cmake_version)
  message(FATAL_ERROR "check_version: include/topocoll/version.hpp says ${_header_version}, "
                      "CMakeLists.txt project(topocoll VERSION ${_cmake_version}); make them equal")
endif()
message(STATUS "check_version: ${_header_version} in both")
