// numpy arrays as the columns of chalk's vectorised Python paths (module.cc): inputs read as
// 1-D arrays of n numbers, outputs written into the caller's own arrays.
#pragma once

#include <cstddef>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "chalk/base/error.h"

namespace chalk::python {

namespace py = pybind11;

/// An input column: `h` as a contiguous 1-D array of n values of T (converted if needed).
/// Throws InputError naming `name` for another shape or length.
template <class T>
py::array_t<T> column(const py::handle& h, std::size_t n, const char* name) {
  auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(h);
  if (!a || a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n) {
    throw InputError(name, "must be a 1-D array of " + std::to_string(n) + " numbers");
  }
  return a;
}

/// An output array the caller passed to roofline_sweep(columns, out): exactly dtype T,
/// one-dimensional, contiguous, writeable and n long, so C++ writes the caller's memory.
/// Throws InputError naming "out.<name>" otherwise.
template <class T>
T* out_column(const py::dict& out, const char* name, std::size_t n) {
  if (!out.contains(name)) throw InputError(std::string("out.") + name, "missing");
  py::handle h = out[name];
  if (!py::array_t<T>::check_(h)) throw InputError(std::string("out.") + name, "must be a numpy array of dtype " + std::string(py::str(py::dtype::of<T>())));
  auto a = py::reinterpret_borrow<py::array>(h);
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n || !(a.flags() & py::array::c_style) || !a.writeable()) {
    throw InputError(std::string("out.") + name, "must be a writeable contiguous 1-D array of " + std::to_string(n));
  }
  return static_cast<T*>(a.mutable_data());
}

}  // namespace chalk::python
