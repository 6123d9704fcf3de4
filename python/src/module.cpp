// SPDX-License-Identifier: Apache-2.0
// relock._relock: the C++ core for python/relock, which is the API users see.
#include <pybind11/pybind11.h>

#include "bridge.hpp"
#include "client.hpp"
#include "errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_relock, m) {
  m.doc() = "relock's C++ core; use the relock package, not this module";
  relock::python::bind_errors(m);
  relock::python::bind_client(m);
  relock::python::bind_locks(m);
  relock::python::bind_synchronizers(m);
  relock::python::bind_queues(m);
  m.def("wait_for_threads_back", &relock::python::wait_for_threads_back, py::arg("seconds"),
        "At exit, after every client closed: waits for the threads still inside relock calls");
}
