// SPDX-License-Identifier: Apache-2.0
#include "errors.hpp"

#include <relock/errors.hpp>

#include <string>
#include <system_error>

namespace relock::python {

namespace {

// relock.errors.from_code(code, message): the instance of the class that code names.
py::object make_error(int code, const std::string& message) {
  return py::module_::import("relock.errors").attr("from_code")(code, message);
}

py::object make_from(const std::system_error& e) {
  // Only relock's own category maps to its classes; another (a std::system_error from the
  // standard library) is a plain relock.Error with its text.
  int code = e.code().category() == relock::error_category() ? e.code().value() : 0;
  return make_error(code, e.what());
}

}  // namespace

py::object python_error(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::system_error& e) {
    return make_from(e);
  } catch (const std::exception& e) {
    return make_error(0, e.what());
  }
}

void bind_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const relock::error& e) {
      py::object error = make_from(e);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });
}

}  // namespace relock::python
