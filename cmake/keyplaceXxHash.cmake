# Provides the imported target keyplace::xxhash: xxHash as a header (keyplace compiles it
# inline, so nothing is linked). Used by our build and by the installed package config.
# Order: xxHash's own CMake package, else the header on the include path (Debian ships only
# the header and pkg-config), else a pinned download (KEYPLACE_FETCH_XXHASH, default ON).
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
    include(FetchContent)
    FetchContent_Declare(keyplace_xxhash
      URL https://github.com/Cyan4973/xxHash/archive/v0.8.2.tar.gz
      URL_HASH SHA256=baee0c6afd4f03165de7a4e67988d16f0f2b257b51d0e3cb91909302a26a79c4)
    FetchContent_GetProperties(keyplace_xxhash)
    if(NOT keyplace_xxhash_POPULATED)
      FetchContent_Populate(keyplace_xxhash)
    endif()
    set(_keyplace_xxhash_include "${keyplace_xxhash_SOURCE_DIR}")
  endif()
  add_library(keyplace::xxhash INTERFACE IMPORTED GLOBAL)
  set_target_properties(keyplace::xxhash PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_keyplace_xxhash_include}")
  unset(_keyplace_xxhash_include)
endif()
