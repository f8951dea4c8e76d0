# The Python module `chalk` (issue 19; python/README.md): pybind11 over the same library and
# CLI code, built by this CMake build, tested by pytest in ctest. On by default when
# pybind11 (Debian: pybind11-dev, python3-pybind11) and Python's headers are found.
#
# The interpreter is Debian's /usr/bin/python3 when present: it is the one that sees
# Debian's python3-pandas, python3-dask, python3-distributed and python3-pytest (a pyenv or
# other python3 first on the PATH does not). Override with -DCHALK_PYTHON_EXECUTABLE=...
if(EXISTS /usr/bin/python3)
  set(_chalk_default_python /usr/bin/python3)
else()
  set(_chalk_default_python "")
endif()
set(CHALK_PYTHON_EXECUTABLE "${_chalk_default_python}" CACHE FILEPATH "Python interpreter the module is built for and tested with")
if(CHALK_PYTHON_EXECUTABLE)
  set(Python_EXECUTABLE "${CHALK_PYTHON_EXECUTABLE}")
endif()
find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
if(Python_FOUND)
  find_package(pybind11 CONFIG QUIET)
endif()
if(Python_FOUND AND pybind11_FOUND AND NOT CHALK_SANITIZE AND NOT CHALK_FUZZ)
  # (Not under ASan/UBSan or libFuzzer: an instrumented module cannot load into an
  # uninstrumented interpreter.)
  set(_chalk_python_default ON)
else()
  set(_chalk_python_default OFF)
endif()
option(CHALK_PYTHON "Build the Python module chalk (python/) with pybind11 and run its pytest suite in ctest" ${_chalk_python_default})
if(CHALK_PYTHON)
  if(NOT (Python_FOUND AND pybind11_FOUND))
    message(FATAL_ERROR "CHALK_PYTHON=ON needs pybind11 and Python's headers (Debian: pybind11-dev python3-pybind11 python3-dev; scripts/setup installs them)")
  endif()
  add_subdirectory(${CMAKE_SOURCE_DIR}/python ${CMAKE_BINARY_DIR}/python-build)
endif()
