# A project that vendors keyplace builds nothing of ours but the interface target.
foreach(_target IN ITEMS keyplace_tests keyplace-cli keyplace-demo keyplace-quickstart keyplace-replicas keyplace-charts keyplace_header_check)
  if(TARGET ${_target})
    message(FATAL_ERROR "keyplace as a subproject defined its own target ${_target}")
  endif()
endforeach()
if(NOT TARGET keyplace::keyplace)
  message(FATAL_ERROR "keyplace::keyplace is missing")
endif()
