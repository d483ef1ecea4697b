# Installs the Python component under a fresh prefix and imports the package from there.
# cmake -DBUILD=<build dir> -DPYTHON=<python3> -DDEST=<the package directory, relative> -P install_check.cmake
set(_prefix "${BUILD}/python-install-check")
file(REMOVE_RECURSE "${_prefix}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --component python --prefix "${_prefix}"
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${_prefix}/${DEST}" "${PYTHON}" -c
  "import keyplace, os; s = keyplace.build('jump', ['a', 'b', 'c']); assert keyplace.__file__.startswith(os.environ['PYTHONPATH']), keyplace.__file__; assert s.owner('k') in ('a', 'b', 'c'); print('installed:', keyplace.__file__)"
  RESULT_VARIABLE rc)
file(REMOVE_RECURSE "${_prefix}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed package does not import: ${rc}")
endif()
