# Shared by the cross toolchains beside it (s390x.cmake, i386.cmake): Debian's cross g++ for
# KEYPLACE_CROSS_TRIPLE, its libraries from /usr/<triple>, and the test programs run under
# qemu-user with that directory as their root (ctest and Catch's test discovery use the emulator).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_CXX_COMPILER "${KEYPLACE_CROSS_TRIPLE}-g++")
# The target's own code-generation flags, ahead of whatever flags the preset or user gives.
if(KEYPLACE_CROSS_CXX_FLAGS AND NOT CMAKE_CXX_FLAGS MATCHES "${KEYPLACE_CROSS_CXX_FLAGS}")
  set(CMAKE_CXX_FLAGS "${KEYPLACE_CROSS_CXX_FLAGS} ${CMAKE_CXX_FLAGS}")
endif()
set(CMAKE_FIND_ROOT_PATH "/usr/${KEYPLACE_CROSS_TRIPLE}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(KEYPLACE_CROSS_QEMU "${KEYPLACE_CROSS_QEMU_NAME}" REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${KEYPLACE_CROSS_QEMU};-L;/usr/${KEYPLACE_CROSS_TRIPLE}")

# Two header-only dependencies come from the host, where Debian installs them for every
# architecture: xxhash.h and Catch2 v2's catch2/catch.hpp. Each is copied alone into the build
# tree and that directory is named, never the host's /usr/include (it holds amd64 headers); the
# host's Catch2 package is not used (its main library is built for amd64), only its Catch.cmake.
get_property(_keyplace_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(NOT _keyplace_in_try_compile)
  set(_keyplace_host_headers "${CMAKE_BINARY_DIR}/host-headers")
  foreach(_keyplace_pair IN ITEMS "xxhash.h:xxhash/xxhash.h" "catch2/catch.hpp:catch2/catch2/catch.hpp")
    string(REPLACE ":" ";" _keyplace_pair "${_keyplace_pair}")
    list(GET _keyplace_pair 0 _keyplace_from)
    list(GET _keyplace_pair 1 _keyplace_to)
    if(NOT EXISTS "/usr/include/${_keyplace_from}")
      message(FATAL_ERROR "keyplace: /usr/include/${_keyplace_from} not found (Debian: libxxhash-dev, catch2)")
    endif()
    get_filename_component(_keyplace_to_dir "${_keyplace_host_headers}/${_keyplace_to}" DIRECTORY)
    file(MAKE_DIRECTORY "${_keyplace_to_dir}")
    file(COPY_FILE "/usr/include/${_keyplace_from}" "${_keyplace_host_headers}/${_keyplace_to}" ONLY_IF_DIFFERENT)
  endforeach()
  set(KEYPLACE_XXHASH_INCLUDE_DIR "${_keyplace_host_headers}/xxhash" CACHE PATH "Directory holding xxhash.h")
  set(KEYPLACE_CATCH2_INCLUDE_DIR "${_keyplace_host_headers}/catch2" CACHE PATH
    "Directory holding catch2/catch.hpp, used instead of the Catch2 package")
  list(APPEND CMAKE_MODULE_PATH /usr/lib/cmake/Catch2)
endif()
