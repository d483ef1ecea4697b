# Provides the imported target keyplace::xxhash: xxHash as a header (keyplace compiles it
# inline, so nothing is linked). Used by our build and by the installed package config.
# Order: xxHash's own CMake package, else the header on the include path (Debian ships only
# the header and pkg-config), else a pinned download (KEYPLACE_FETCH_XXHASH, default ON;
# KEYPLACE_XXHASH_URL). Without the header and without the download, configuring stops at once
# with one message.
include_guard(GLOBAL)

if(NOT TARGET keyplace::xxhash)
  set(_keyplace_xxhash_include "")
  find_package(xxHash 0.8 CONFIG QUIET)
  if(TARGET xxHash::xxhash)
    get_target_property(_keyplace_xxhash_include xxHash::xxhash INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  if(NOT _keyplace_xxhash_include)
    find_path(KEYPLACE_XXHASH_INCLUDE_DIR NAMES xxhash.h DOC "Directory holding xxhash.h")
    if(KEYPLACE_XXHASH_INCLUDE_DIR)
      set(_keyplace_xxhash_include "${KEYPLACE_XXHASH_INCLUDE_DIR}")
    endif()
  endif()
  if(NOT _keyplace_xxhash_include)
    option(KEYPLACE_FETCH_XXHASH "Download xxHash when it is not installed" ON)
    if(NOT KEYPLACE_FETCH_XXHASH)
      message(FATAL_ERROR "keyplace: xxhash.h not found. Install xxHash >= 0.8 (Debian: "
                          "libxxhash-dev), set KEYPLACE_XXHASH_INCLUDE_DIR, or enable "
                          "KEYPLACE_FETCH_XXHASH.")
    endif()
    # One bounded download (a machine without network must not wait minutes on DNS), checked
    # against the pinned hash, and one clear message when it fails.
    set(KEYPLACE_XXHASH_URL "https://github.com/Cyan4973/xxHash/archive/v0.8.2.tar.gz"
      CACHE STRING "Where KEYPLACE_FETCH_XXHASH downloads xxHash 0.8.2 from (a mirror, or file://)")
    set(_keyplace_xxhash_sha256 baee0c6afd4f03165de7a4e67988d16f0f2b257b51d0e3cb91909302a26a79c4)
    set(_keyplace_xxhash_root "${CMAKE_BINARY_DIR}/_deps/keyplace_xxhash")
    set(_keyplace_xxhash_dir "${_keyplace_xxhash_root}/xxHash-0.8.2")
    if(NOT EXISTS "${_keyplace_xxhash_dir}/xxhash.h")
      message(STATUS "keyplace: xxhash.h not found; downloading ${KEYPLACE_XXHASH_URL}")
      set(_keyplace_xxhash_archive "${_keyplace_xxhash_root}/xxHash-0.8.2.tar.gz")
      file(DOWNLOAD "${KEYPLACE_XXHASH_URL}" "${_keyplace_xxhash_archive}"
        TIMEOUT 30 INACTIVITY_TIMEOUT 10 STATUS _keyplace_xxhash_status)
      list(GET _keyplace_xxhash_status 0 _keyplace_xxhash_code)
      list(GET _keyplace_xxhash_status 1 _keyplace_xxhash_reason)
      if(_keyplace_xxhash_code EQUAL 0)
        file(SHA256 "${_keyplace_xxhash_archive}" _keyplace_xxhash_got)
        if(NOT _keyplace_xxhash_got STREQUAL _keyplace_xxhash_sha256)
          set(_keyplace_xxhash_code 1)
          set(_keyplace_xxhash_reason "SHA-256 ${_keyplace_xxhash_got}, expected ${_keyplace_xxhash_sha256}")
        endif()
      endif()
      if(NOT _keyplace_xxhash_code EQUAL 0)
        file(REMOVE "${_keyplace_xxhash_archive}")
        message(FATAL_ERROR "keyplace: xxhash.h not found, and downloading xxHash from "
                            "${KEYPLACE_XXHASH_URL} failed (${_keyplace_xxhash_reason}). Install "
                            "xxHash >= 0.8 (Debian: libxxhash-dev), set KEYPLACE_XXHASH_INCLUDE_DIR, "
                            "or point KEYPLACE_XXHASH_URL at a copy of the v0.8.2 archive.")
      endif()
      file(ARCHIVE_EXTRACT INPUT "${_keyplace_xxhash_archive}" DESTINATION "${_keyplace_xxhash_root}")
      file(REMOVE "${_keyplace_xxhash_archive}")
    endif()
    set(_keyplace_xxhash_include "${_keyplace_xxhash_dir}")
  endif()
  add_library(keyplace::xxhash INTERFACE IMPORTED GLOBAL)
  set_target_properties(keyplace::xxhash PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_keyplace_xxhash_include}")
  unset(_keyplace_xxhash_include)
endif()
