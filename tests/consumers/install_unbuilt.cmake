# `cmake --install` of a configured build in which nothing was built (keyplace is header-only, so
# the find_package recipe needs no build): the install succeeds without the programs and the
# compiled components, find_package(keyplace) then works, and COMPONENTS etcd says why it is absent.
# Run as: cmake -DKEYPLACE_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DCXX_FLAGS=...
#   -DLINKER_FLAGS=... -P install_unbuilt.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
set(_compiler "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
set(_prefix "${WORK_DIR}/prefix")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${_rc}):\n${_out}\n${_err}")
  endif()
  set(_out "${_out}" PARENT_SCOPE)
endfunction()

run("configuring keyplace" "${CMAKE_COMMAND}" -S "${KEYPLACE_SOURCE_DIR}" -B "${WORK_DIR}/keyplace" -G "${GENERATOR}"
    ${_compiler} -DKEYPLACE_BUILD_TESTS=OFF -DKEYPLACE_BUILD_EXAMPLES=ON -DKEYPLACE_INSTALL=ON)
run("installing the unbuilt build" "${CMAKE_COMMAND}" --install "${WORK_DIR}/keyplace" --prefix "${_prefix}")
file(GLOB_RECURSE _binaries "${_prefix}/*keyplace-cli" "${_prefix}/*keyplace-cli.1" "${_prefix}/*.a")
if(_binaries)
  message(FATAL_ERROR "an unbuilt build installed programs or libraries: ${_binaries}")
endif()

run("configuring the find_package consumer" "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/find_package"
    -B "${WORK_DIR}/consumer" -G "${GENERATOR}" ${_compiler} "-DCMAKE_PREFIX_PATH=${_prefix}")
run("building it" "${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
run("running it" "${WORK_DIR}/consumer/consumer")
if(NOT _out MATCHES "consumer: ok")
  message(FATAL_ERROR "the find_package consumer printed '${_out}'")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/find_package_etcd"
    -B "${WORK_DIR}/consumer_etcd" -G "${GENERATOR}" ${_compiler} "-DCMAKE_PREFIX_PATH=${_prefix}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
string(REGEX REPLACE "[ \t\r\n]+" " " _flat "${_err}")  # CMake wraps and pads messages
if(_rc EQUAL 0 OR NOT _flat MATCHES "keyplace's (compiled|etcd) component is not installed")
  message(FATAL_ERROR "COMPONENTS etcd from an unbuilt install: status ${_rc}, stderr:\n${_err}")
endif()
message(STATUS "installed unbuilt; find_package(keyplace) works; COMPONENTS etcd refused with a reason")
