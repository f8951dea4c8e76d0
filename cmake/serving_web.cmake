# Embeds the chart libraries (vega, vega-lite, vega-embed from web/node_modules, installed
# by `npm ci --prefix web`) and the template web/serving.html into the chalk command line,
# so that `chalk serving plot` writes one self-contained HTML file that opens offline.
#
# Use it either way:
#   include(cmake/serving_web.cmake)          at the end of the top-level CMakeLists.txt, or
#   cmake -DCMAKE_PROJECT_INCLUDE=<src>/cmake/serving_web.cmake ...   (runs after project();
#                                              the setup waits until the targets exist).
# Without web/node_modules the build still succeeds: `chalk serving plot` then says how to
# get the libraries, and `chalk serving plot --json` still prints the chart data.
include_guard(GLOBAL)

set(CHALK_SERVING_WEB_DIR "${CMAKE_CURRENT_LIST_DIR}/../web" CACHE INTERNAL "")
set(CHALK_SERVING_WEB_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/serving_web_embed.cmake" CACHE INTERNAL "")

function(chalk_serving_web_setup)
  get_property(done GLOBAL PROPERTY CHALK_SERVING_WEB_DONE)
  if(done OR NOT TARGET chalk_cli)
    return()
  endif()
  set_property(GLOBAL PROPERTY CHALK_SERVING_WEB_DONE TRUE)
  get_filename_component(web "${CHALK_SERVING_WEB_DIR}" ABSOLUTE)
  set(inputs
      "${web}/node_modules/vega/build/vega.min.js"
      "${web}/node_modules/vega-lite/build/vega-lite.min.js"
      "${web}/node_modules/vega-embed/build/vega-embed.min.js"
      "${web}/serving.html"
      "${web}/simulate.html")
  foreach(f IN LISTS inputs)
    if(NOT EXISTS "${f}")
      message(STATUS "chalk: ${f} is missing: `chalk serving plot` will print chart data only (run `npm ci --prefix web`)")
      return()
    endif()
  endforeach()
  set(out "${CMAKE_BINARY_DIR}/generated/serving_web_assets.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -DWEB_DIR=${web} -DOUTPUT=${out} -P "${CHALK_SERVING_WEB_SCRIPT}"
    DEPENDS ${inputs} "${web}/node_modules/vega/package.json" "${web}/node_modules/vega-lite/package.json"
            "${web}/node_modules/vega-embed/package.json" "${CHALK_SERVING_WEB_SCRIPT}"
    COMMENT "Embedding web/ chart libraries and template")
  target_sources(chalk_cli PRIVATE "${out}")
  set_source_files_properties("${out}" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)  # megabytes of literals: its own unit
  # Public: `chalk-web` serves the same libraries to the page (apps/chalk/web_assets.cc).
  target_compile_definitions(chalk_cli PUBLIC CHALK_SERVING_WEB=1)
  message(STATUS "chalk: `chalk serving plot` embeds vega/vega-lite/vega-embed from ${web}/node_modules")
endfunction()

if(TARGET chalk_cli)
  chalk_serving_web_setup()
else()
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL chalk_serving_web_setup)
endif()
