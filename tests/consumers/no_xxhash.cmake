# Configuring keyplace on a machine without xxhash.h stops at once with one clear message:
# with downloading off, and with a download that cannot succeed (here a file:// URL that does
# not exist, standing in for a machine without network). Every search is re-rooted at a
# directory that does not exist, so the installed header is not found.
# Run as: cmake -DKEYPLACE_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -P no_xxhash.cmake
foreach(_case IN ITEMS off unreachable)
  set(_dir "${WORK_DIR}/${_case}")
  file(REMOVE_RECURSE "${_dir}")
  set(_args -S "${KEYPLACE_SOURCE_DIR}" -B "${_dir}" -G "${GENERATOR}"
      -DKEYPLACE_BUILD_TESTS=OFF -DKEYPLACE_BUILD_EXAMPLES=OFF -DKEYPLACE_INSTALL=OFF
      -DKEYPLACE_WITH_ETCD=OFF -DCMAKE_DISABLE_FIND_PACKAGE_xxHash=ON
      "-DCMAKE_FIND_ROOT_PATH=${WORK_DIR}/no-such-root" -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY)
  if(_case STREQUAL "off")
    list(APPEND _args -DKEYPLACE_FETCH_XXHASH=OFF)
    set(_expected "xxhash.h not found. Install xxHash >= 0.8 (Debian: libxxhash-dev)")
  else()
    list(APPEND _args "-DKEYPLACE_XXHASH_URL=file://${WORK_DIR}/no-such-archive.tar.gz")
    set(_expected "downloading xxHash from file://${WORK_DIR}/no-such-archive.tar.gz failed")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  string(REGEX REPLACE "[ \t\r\n]+" " " _flat "${_err}")  # CMake wraps and pads messages
  string(FIND "${_flat}" "${_expected}" _at)
  string(REGEX MATCHALL "CMake Error" _errors "${_err}")
  list(LENGTH _errors _error_count)
  if(_rc EQUAL 0 OR _at EQUAL -1 OR NOT _error_count EQUAL 1)
    message(FATAL_ERROR "case ${_case}: status ${_rc}, ${_error_count} CMake errors, expected one "
                        "saying '${_expected}'; stderr:\n${_err}")
  endif()
  message(STATUS "case ${_case}: refused with one message")
endforeach()
