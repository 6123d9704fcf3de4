// SPDX-License-Identifier: Apache-2.0
// relock's errors as Python exceptions: each relock::errc is a class of relock.errors
// (python/relock/errors.py), made there by code, so Python and C++ agree on one table.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

namespace relock::python {

namespace py = pybind11;

// The relock.errors exception for a failure (a relock::error, or anything else as relock.Error).
py::object python_error(std::exception_ptr failure);

// Registers the translator that raises relock::error as its relock.errors class.
void bind_errors(py::module_& m);

}  // namespace relock::python
