# keyplace::etcd's tests, included by tests/CMakeLists.txt in every build and in the tsan preset's
# thread-tests-only build (the watcher runs threads).

# keyplace::etcd against a real etcd, which tests/etcd/etcd_server.sh starts on free loopback
# ports as a ctest fixture (skipped, exit 77, where etcd is not installed). The cases share one
# etcd, and one of them stops and restarts it: they never run in parallel (RESOURCE_LOCK).
if(KEYPLACE_ETCD_BUILT)
  # keyplace::etcd's publisher and watcher over memory_store: their logic in every build where the
  # component is built, with no etcd installed (no fixture, nothing skipped).
  add_executable(keyplace_etcd_memory_tests etcd/memory_store_test.cpp)
  target_link_libraries(keyplace_etcd_memory_tests PRIVATE keyplace::etcd ${_keyplace_catch_main} Threads::Threads)
  catch_discover_tests(keyplace_etcd_memory_tests TEST_PREFIX "etcd-memory.")

  set(_keyplace_etcd_dir "${CMAKE_CURRENT_BINARY_DIR}/etcd-fixture")
  set(_keyplace_etcd_script "${CMAKE_CURRENT_SOURCE_DIR}/etcd/etcd_server.sh")
  add_executable(keyplace_etcd_tests etcd/etcd_test.cpp)
  target_link_libraries(keyplace_etcd_tests PRIVATE keyplace::etcd ${_keyplace_catch_main} Threads::Threads)
  target_compile_definitions(keyplace_etcd_tests PRIVATE
    KEYPLACE_ETCD_FIXTURE_DIR="${_keyplace_etcd_dir}"
    KEYPLACE_ETCD_SERVER_SCRIPT="${_keyplace_etcd_script}")
  add_test(NAME etcd.server_start COMMAND sh "${_keyplace_etcd_script}" start "${_keyplace_etcd_dir}")
  add_test(NAME etcd.server_stop COMMAND sh "${_keyplace_etcd_script}" stop "${_keyplace_etcd_dir}")
  set_tests_properties(etcd.server_start PROPERTIES FIXTURES_SETUP keyplace_etcd SKIP_RETURN_CODE 77
    RESOURCE_LOCK keyplace_etcd)
  set_tests_properties(etcd.server_stop PROPERTIES FIXTURES_CLEANUP keyplace_etcd RESOURCE_LOCK keyplace_etcd)
  catch_discover_tests(keyplace_etcd_tests TEST_PREFIX "etcd."
    PROPERTIES FIXTURES_REQUIRED keyplace_etcd RESOURCE_LOCK keyplace_etcd SKIP_RETURN_CODE 77)

  # keyplace-cli's etcd commands as processes on the same etcd: publishers and watchers of one
  # fleet (tests/etcd/cli_fleet_test.sh), under the same fixture and lock.
  if(TARGET keyplace-cli)
    add_test(NAME etcd.cli_fleet
      COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/etcd/cli_fleet_test.sh" "$<TARGET_FILE:keyplace-cli>"
              "${_keyplace_etcd_dir}")
    set_tests_properties(etcd.cli_fleet PROPERTIES
      FIXTURES_REQUIRED keyplace_etcd RESOURCE_LOCK keyplace_etcd SKIP_RETURN_CODE 77 TIMEOUT 180)
    # A ramped join published one epoch at a time behind the adoption barrier, stopped and resumed.
    add_test(NAME etcd.cli_ramp
      COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/etcd/cli_ramp_test.sh" "$<TARGET_FILE:keyplace-cli>"
              "${_keyplace_etcd_dir}")
    set_tests_properties(etcd.cli_ramp PROPERTIES
      FIXTURES_REQUIRED keyplace_etcd RESOURCE_LOCK keyplace_etcd SKIP_RETURN_CODE 77 TIMEOUT 180)
    # A watcher process killed, etcd stopped, the process restarted from its --cache file.
    add_test(NAME etcd.cli_restart
      COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/etcd/cli_restart_test.sh" "$<TARGET_FILE:keyplace-cli>"
              "${_keyplace_etcd_dir}" "${_keyplace_etcd_script}")
    set_tests_properties(etcd.cli_restart PROPERTIES
      FIXTURES_REQUIRED keyplace_etcd RESOURCE_LOCK keyplace_etcd SKIP_RETURN_CODE 77 TIMEOUT 180)
    # etcd watch --metrics scraped by a real Prometheus (skipped, 77, without prometheus): only
    # where keyplace-cli was built with cpp-httplib (cli/CMakeLists.txt).
    if(KEYPLACE_CLI_METRICS_SERVER)
      add_test(NAME etcd.cli_metrics
        COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/etcd/cli_metrics_test.sh" "$<TARGET_FILE:keyplace-cli>"
                "${_keyplace_etcd_dir}")
      set_tests_properties(etcd.cli_metrics PROPERTIES
        FIXTURES_REQUIRED keyplace_etcd RESOURCE_LOCK keyplace_etcd SKIP_RETURN_CODE 77 TIMEOUT 180)
    endif()
  endif()

  # keyplace::etcd against a secured 3-member etcd (TLS, client certificates, authentication;
  # simple tokens expire after 5 idle seconds), which tests/etcd/etcd_cluster.sh starts on free
  # loopback ports as another fixture (skipped, exit 77, where etcd, etcdctl or openssl is not
  # installed). Some cases kill the leader: they never run in parallel (RESOURCE_LOCK).
  set(_keyplace_etcd_cluster_dir "${CMAKE_CURRENT_BINARY_DIR}/etcd-cluster-fixture")
  set(_keyplace_etcd_cluster_script "${CMAKE_CURRENT_SOURCE_DIR}/etcd/etcd_cluster.sh")
  add_executable(keyplace_etcd_secure_tests etcd/secure_test.cpp)
  target_link_libraries(keyplace_etcd_secure_tests PRIVATE keyplace::etcd nlohmann_json::nlohmann_json
    ${_keyplace_catch_main} Threads::Threads)
  target_compile_definitions(keyplace_etcd_secure_tests PRIVATE
    KEYPLACE_ETCD_CLUSTER_DIR="${_keyplace_etcd_cluster_dir}"
    KEYPLACE_ETCD_CLUSTER_SCRIPT="${_keyplace_etcd_cluster_script}")
  add_test(NAME etcd.cluster_start
    COMMAND sh "${_keyplace_etcd_cluster_script}" start "${_keyplace_etcd_cluster_dir}" 5)
  add_test(NAME etcd.cluster_stop COMMAND sh "${_keyplace_etcd_cluster_script}" stop "${_keyplace_etcd_cluster_dir}")
  set_tests_properties(etcd.cluster_start PROPERTIES FIXTURES_SETUP keyplace_etcd_cluster SKIP_RETURN_CODE 77
    RESOURCE_LOCK keyplace_etcd_cluster TIMEOUT 120)
  set_tests_properties(etcd.cluster_stop PROPERTIES FIXTURES_CLEANUP keyplace_etcd_cluster
    RESOURCE_LOCK keyplace_etcd_cluster)
  catch_discover_tests(keyplace_etcd_secure_tests TEST_PREFIX "etcd."
    PROPERTIES FIXTURES_REQUIRED keyplace_etcd_cluster RESOURCE_LOCK keyplace_etcd_cluster SKIP_RETURN_CODE 77
    TIMEOUT 120)
  if(TARGET keyplace-cli)
    add_test(NAME etcd.cli_secure
      COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/etcd/cli_secure_test.sh" "$<TARGET_FILE:keyplace-cli>"
              "${_keyplace_etcd_cluster_dir}")
    set_tests_properties(etcd.cli_secure PROPERTIES
      FIXTURES_REQUIRED keyplace_etcd_cluster RESOURCE_LOCK keyplace_etcd_cluster SKIP_RETURN_CODE 77 TIMEOUT 180)
  endif()
endif()
