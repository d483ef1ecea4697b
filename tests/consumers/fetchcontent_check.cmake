# FetchContent of keyplace builds what the consumer asks for, checked on the build it leaves:
# CASE=default: the consumer runs, and no object of keyplace::etcd was compiled nor libcurl looked
# up; CASE=etcd (it sets KEYPLACE_WITH_ETCD ON): the consumer links keyplace::etcd and runs, and
# so does a second one that links keyplace::compiled alone.
# Run as: cmake -DKEYPLACE_SOURCE_DIR=... -DWORK_DIR=... -DCASE=... -DGENERATOR=...
#   -DCXX=... -DCXX_FLAGS=... -DLINKER_FLAGS=... [-DLAUNCHER=...] -P fetchcontent_check.cmake
set(_args -S "${CMAKE_CURRENT_LIST_DIR}/fetchcontent" -B "${WORK_DIR}" -G "${GENERATOR}"
    "-DKEYPLACE_SOURCE_DIR=${KEYPLACE_SOURCE_DIR}" "-DCMAKE_CXX_COMPILER=${CXX}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
if(LAUNCHER)
  list(APPEND _args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
if(CASE STREQUAL "etcd")
  list(APPEND _args -DCONSUMER_WANTS_ETCD=ON)
  set(_expected "etcd consumer: ok")
elseif(CASE STREQUAL "default")
  list(APPEND _args -DCONSUMER_WANTS_ETCD=OFF)
  set(_expected "consumer: ok")
else()
  message(FATAL_ERROR "CASE is '${CASE}': use default or etcd")
endif()

foreach(_step IN ITEMS configure build run)
  if(_step STREQUAL "configure")
    set(_command "${CMAKE_COMMAND}" ${_args})
  elseif(_step STREQUAL "build")
    set(_command "${CMAKE_COMMAND}" --build "${WORK_DIR}")
  else()
    set(_command "${WORK_DIR}/consumer")
  endif()
  execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "case ${CASE}: ${_step} failed (${_rc}):\n${_out}\n${_err}")
  endif()
endforeach()
string(FIND "${_out}" "${_expected}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "case ${CASE}: the consumer printed '${_out}', not '${_expected}'")
endif()
# CASE=etcd also builds a consumer of keyplace::compiled alone (FetchContent is add_subdirectory).
if(CASE STREQUAL "etcd")
  execute_process(COMMAND "${WORK_DIR}/compiled_consumer" RESULT_VARIABLE _rc OUTPUT_VARIABLE _cout ERROR_VARIABLE _cerr)
  string(FIND "${_cout}" "compiled consumer: ok" _cat)
  if(NOT _rc EQUAL 0 OR _cat EQUAL -1)
    message(FATAL_ERROR "case etcd: the keyplace::compiled consumer failed (${_rc}): '${_cout}' ${_cerr}")
  endif()
endif()

# What the build left: keyplace::etcd's objects and library, and whether libcurl was looked up.
file(GLOB_RECURSE _etcd_files LIST_DIRECTORIES false "${WORK_DIR}/*.o" "${WORK_DIR}/*.a")
list(FILTER _etcd_files INCLUDE REGEX "keyplace_etcd")
list(LENGTH _etcd_files _etcd_count)
file(STRINGS "${WORK_DIR}/CMakeCache.txt" _curl_lookups REGEX "^CURL_")
if(CASE STREQUAL "default" AND (_etcd_count GREATER 0 OR _curl_lookups))
  message(FATAL_ERROR "case default: keyplace::etcd was built or set up unasked: ${_etcd_files} ${_curl_lookups}")
endif()
if(CASE STREQUAL "etcd" AND _etcd_count EQUAL 0)
  message(FATAL_ERROR "case etcd: no object of keyplace::etcd in ${WORK_DIR}")
endif()
message(STATUS "case ${CASE}: ${_out}; ${_etcd_count} files of keyplace::etcd built")
