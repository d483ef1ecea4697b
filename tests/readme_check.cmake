# The README's quickstart block is examples/quickstart.cpp, line for line.
file(READ "${README}" _readme)
file(READ "${QUICKSTART}" _quickstart)
string(FIND "${_readme}" "```cpp\n${_quickstart}```" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "README.md's quickstart differs from examples/quickstart.cpp")
endif()
message(STATUS "README quickstart matches examples/quickstart.cpp")
