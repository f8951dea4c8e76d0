# `chalk web` (issue 18): embeds the page (every file under web/app/) and the API's
# description (web/openapi.json) into the chalk command line, so the server reads no file
# at run time. The chart libraries come from cmake/serving_web.cmake's embedding.
include_guard(GLOBAL)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CHALK_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
file(GLOB CHALK_WEB_APP_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/app/*.html ${CMAKE_SOURCE_DIR}/web/app/*.js
     ${CMAKE_SOURCE_DIR}/web/app/*.css)
set(CHALK_WEB_APP_OUT ${CMAKE_BINARY_DIR}/generated/web_app_assets.cc)
add_custom_command(
  OUTPUT ${CHALK_WEB_APP_OUT}
  COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${CMAKE_SOURCE_DIR}/web -DOUTPUT=${CHALK_WEB_APP_OUT} -P ${CMAKE_SOURCE_DIR}/cmake/web_app_embed.cmake
  DEPENDS ${CHALK_WEB_APP_FILES} ${CMAKE_SOURCE_DIR}/web/openapi.json ${CMAKE_SOURCE_DIR}/cmake/web_app_embed.cmake
  COMMENT "Embedding web/app and web/openapi.json")
# `chalk-web`: the same command line with the server (cmd_web.cc), the embedded page and
# cpp-httplib. `chalk web` execs it (apps/chalk/web_exec.cc), so `chalk` itself loads no
# OpenSSL, brotli or zlib at start-up (about 9 ms a run; issue 11). Building `chalk`
# builds it too.
add_executable(chalk-web ${CMAKE_SOURCE_DIR}/apps/chalk/main.cc ${CMAKE_SOURCE_DIR}/apps/chalk/cmd_web.cc ${CMAKE_SOURCE_DIR}/apps/chalk/web_server.cc
                         ${CMAKE_SOURCE_DIR}/apps/chalk/web_assets.cc ${CHALK_WEB_APP_OUT})
target_link_libraries(chalk-web PRIVATE chalk_cli PkgConfig::CHALK_HTTPLIB)
# One unit for main.cc and the server's files (CLI11 compiled once, not in main.cc and
# cmd_web.cc apart; CMakeLists.txt); the embedded page stays its own unit.
set_target_properties(chalk-web PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
chalk_front_end(chalk-web)  # -O2: CMakeLists.txt
if(CHALK_SANITIZE)
  target_compile_options(chalk-web PRIVATE -O0)  # a front end: see chalk_cli in CMakeLists.txt
  chalk_link_core_first(chalk-web)
endif()
set_source_files_properties(${CHALK_WEB_APP_OUT} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
add_dependencies(chalk chalk-web)

# Tests of `chalk web` (tests/web/): the API against web/openapi.json and the CLI's
# --json, the page in headless Chromium (playwright-core from web/node_modules, Debian's
# /usr/bin/chromium; skipped when either is missing), a bounded load test with wrk.
find_program(CHALK_NODE node)
add_test(NAME web.openapi COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/web/openapi_gen.py --check $<TARGET_FILE:chalk> ${CMAKE_SOURCE_DIR})
if(CHALK_NODE)
  add_test(NAME web.api COMMAND ${CHALK_NODE} ${CMAKE_SOURCE_DIR}/tests/web/api_test.mjs $<TARGET_FILE:chalk> ${CMAKE_SOURCE_DIR})
  add_test(NAME web.browser COMMAND ${CHALK_NODE} ${CMAKE_SOURCE_DIR}/tests/web/browser_test.mjs $<TARGET_FILE:chalk> ${CMAKE_SOURCE_DIR}
                                    ${CMAKE_BINARY_DIR}/web.png)
  # Every package the lock pins runs on Debian 12's Node.js 18 (issue 28).
  add_test(NAME web.node_engines COMMAND ${CHALK_NODE} ${CMAKE_SOURCE_DIR}/tests/web/node_engines_test.mjs ${CMAKE_SOURCE_DIR})
  # The server holds under abuse (issue 28): deep bodies, slow clients, work over budget,
  # other sites' requests, HTTP framing; each leaves it answering within a second.
  add_test(NAME web.abuse COMMAND ${CHALK_NODE} ${CMAKE_SOURCE_DIR}/tests/web/abuse_test.mjs $<TARGET_FILE:chalk> ${CMAKE_SOURCE_DIR})
  set_tests_properties(web.abuse PROPERTIES TIMEOUT 90)
  set_tests_properties(web.api PROPERTIES TIMEOUT 120)
  # 180 s: 51 s run alone at a load of 15 on the shared 2-core build machine, 84 s under ctest, past 120 s beside another test.
  set_tests_properties(web.browser PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
add_test(NAME web.load COMMAND bash ${CMAKE_SOURCE_DIR}/tests/web/load.sh $<TARGET_FILE:chalk> ${CMAKE_SOURCE_DIR})
set_tests_properties(web.load PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
# ctest -j starts the costliest tests first, but a fresh build has no timings of its own
# (Testing/Temporary/CTestCostData.txt) and starts tests in the order they are added: these,
# added last, started after the other 700-odd, and the page's test (38 s in the release
# tree) then ran alone on one of the two cores while the other sat idle. COST: seconds of a
# release run; a COST set here is used in place of ctest's recorded timings
# (cmCTestMultiProcessHandler::ReadCostData reads those only for tests whose COST is 0).
if(CHALK_NODE)
  set_tests_properties(web.browser PROPERTIES COST 38)
  set_tests_properties(web.abuse PROPERTIES COST 7)
  set_tests_properties(web.api PROPERTIES COST 4)
  if(CHALK_SANITIZE)
    set_tests_properties(web.api PROPERTIES COST 30)  # its ASan seconds (a fresh Debian 12 run at abd7cea)
  endif()
endif()
set_tests_properties(web.load PROPERTIES COST 3)
