// SPDX-License-Identifier: Apache-2.0
// The Python Client's C++ side, and the bind_* functions each file of python/src gives the module.
#pragma once

#include <pybind11/pybind11.h>

#include <relock/client.hpp>
#include <relock/config.hpp>

#include <memory>

namespace relock::python {

namespace py = pybind11;

// Owns the relock::client behind a Python Client. close() (or the object's end) shuts it down
// with the GIL released; handles made from it fail with errc::cancelled afterwards.
class client_handle {
 public:
  explicit client_handle(relock::config settings);
  ~client_handle();
  client_handle(const client_handle&) = delete;
  client_handle& operator=(const client_handle&) = delete;

  void close();
  // In a fork()ed child: the client's I/O thread exists only in the parent, so it can neither
  // work nor be joined here. Forgets it (its memory is the parent's copy) without a word to
  // its connections, which the parent still uses.
  void abandon();
  bool closed() const { return client_ == nullptr; }
  // Throws errc::cancelled once closed.
  relock::client& get() const;

 private:
  std::unique_ptr<relock::client> client_;
  bool abandoned_ = false;
};

void bind_client(py::module_& m);
void bind_locks(py::module_& m);
void bind_synchronizers(py::module_& m);
void bind_queues(py::module_& m);

}  // namespace relock::python
