// SPDX-License-Identifier: Apache-2.0
// relock._relock: the C++ core for python/relock, which is the API users see.
#include <pybind11/pybind11.h>

#include "client.hpp"
#include "errors.hpp"

PYBIND11_MODULE(_relock, m) {
  m.doc() = "relock's C++ core; use the relock package, not this module";
  relock::python::bind_errors(m);
  relock::python::bind_client(m);
  relock::python::bind_locks(m);
  relock::python::bind_synchronizers(m);
  relock::python::bind_queues(m);
}
