// SPDX-License-Identifier: Apache-2.0
// relock._relock.Semaphore, PermitExpirableSemaphore and CountDownLatch: their waits, blocking
// and for asyncio, through bridge.hpp, and their one-round-trip queries with the GIL released.
// An id-permit crosses into Python as its id (the relock::permit is detached on relock's I/O
// thread): a Python object that gave a permit back from its destructor would block on Redis with
// the GIL held, so python/relock/_synchronizers.py gives it back by id instead.
#include <pybind11/stl.h>

#include <relock/count_down_latch.hpp>
#include <relock/permit.hpp>
#include <relock/permit_expirable_semaphore.hpp>
#include <relock/semaphore.hpp>
#include <relock/with_detail.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>

#include "bridge.hpp"
#include "client.hpp"
#include "durations.hpp"

namespace relock::python {

namespace {

using millis = std::chrono::milliseconds;
using permit_id = std::optional<std::string>;

// A waiting acquire's wait, as the core's async_acquire takes it: `forever` is none (no
// deadline), otherwise `wait` or, when None, zero (one attempt).
std::optional<millis> acquire_wait(std::optional<double> wait, bool forever) {
  if (forever) return std::nullopt;
  return to_millis(wait, "timeout").value_or(millis(0));
}

// ---- semaphore ----

template <class Done>
void start_acquire(relock::semaphore s, std::int64_t permits, std::optional<millis> wait,
                   std::stop_token stop, Done done) {
  s.async_acquire(permits, wait, std::move(stop),
                  relock::with_detail(
                      [done](std::exception_ptr e, bool got) mutable { done(std::move(e), got); }));
}

template <class Done>
void start_release(relock::semaphore s, std::int64_t permits, Done done) {
  s.async_release(permits, relock::with_detail([done](std::exception_ptr e) mutable {
                    done(std::move(e), nothing{});
                  }));
}

// ---- permit-expirable semaphore ----

relock::permit_options permit_opts(std::optional<double> wait, std::optional<double> lease,
                                   bool forever) {
  relock::permit_options o;
  o.wait = acquire_wait(wait, forever);
  o.lease = to_millis(lease, "lease");
  return o;
}

// The permit is detached where it arrives, on relock's I/O thread: from then on its id is the
// only handle on it (the watchdog keeps renewing a lease-less one while the client lives).
template <class Done>
void start_acquire(relock::permit_expirable_semaphore s, relock::permit_options o, Done done) {
  s.async_acquire(
      std::move(o),
      relock::with_detail([done](std::exception_ptr e, std::optional<relock::permit> p) mutable {
        done(std::move(e), p ? permit_id(p->detach()) : permit_id());
      }));
}

template <class Done>
void start_release(relock::permit_expirable_semaphore s, std::string id, Done done) {
  s.async_release(std::move(id), relock::with_detail([done](std::exception_ptr e) mutable {
                    done(std::move(e), nothing{});
                  }));
}

// ---- latch ----

template <class Done>
void start_await(relock::count_down_latch l, std::optional<millis> wait, std::stop_token stop,
                 Done done) {
  l.async_await(wait, std::move(stop),
                relock::with_detail([done](std::exception_ptr e, bool opened) mutable {
                  done(std::move(e), opened);
                }));
}

template <class Done>
void start_count_down(relock::count_down_latch l, Done done) {
  l.async_count_down(
      relock::with_detail([done](std::exception_ptr e) mutable { done(std::move(e), nothing{}); }));
}

void bind_semaphore(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;
  using relock::semaphore;

  py::class_<semaphore>(m, "Semaphore")
      .def_property_readonly("name", &semaphore::name)
      .def_property_readonly("key", &semaphore::key)
      .def(
          "acquire",
          [](const semaphore& s, std::int64_t permits, std::optional<double> wait, bool forever) {
            auto w = acquire_wait(wait, forever);
            return wait_interruptibly<bool>(
                [&](std::stop_token stop, auto done) {
                  start_acquire(s, permits, w, std::move(stop), std::move(done));
                },
                [&](bool got) {
                  // Taken as Ctrl-C came: given back, its failure nobody's to hear.
                  if (got) semaphore(s).async_release(permits, [](std::error_code) {});
                });
          },
          py::arg("permits"), py::arg("wait"), py::arg("forever"))
      .def(
          "acquire_async",
          [](const semaphore& s, std::int64_t permits, std::optional<double> wait, bool forever,
             py::object done) {
            auto w = acquire_wait(wait, forever);
            return start_for_python<bool>(
                [&](std::stop_token stop, auto finished) {
                  start_acquire(s, permits, w, std::move(stop), std::move(finished));
                },
                std::move(done));
          },
          py::arg("permits"), py::arg("wait"), py::arg("forever"), py::arg("done"))
      .def(
          "release",
          [](const semaphore& s, std::int64_t permits) {
            wait_to_end<nothing>([&](auto done) { start_release(s, permits, std::move(done)); });
          },
          py::arg("permits"))
      .def(
          "release_async",
          [](const semaphore& s, std::int64_t permits, py::object done) {
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) {
                  start_release(s, permits, std::move(finished));
                },
                std::move(done));
          },
          py::arg("permits"), py::arg("done"))
      .def("available_permits", &semaphore::available_permits, release_gil())
      .def(
          "drain_permits", [](semaphore s) { return s.drain_permits(); }, release_gil())
      .def(
          "try_set_permits", [](semaphore s, std::int64_t n) { return s.try_set_permits(n); },
          py::arg("permits"), release_gil())
      .def(
          "add_permits", [](semaphore s, std::int64_t n) { s.add_permits(n); }, py::arg("permits"),
          release_gil());
}

void bind_permit_expirable_semaphore(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;
  using relock::permit_expirable_semaphore;
  using pes = permit_expirable_semaphore;

  py::class_<pes>(m, "PermitExpirableSemaphore")
      .def_property_readonly("name", &pes::name)
      .def_property_readonly("key", &pes::key)
      .def(
          "acquire",
          [](const pes& s, std::optional<double> wait, std::optional<double> lease, bool forever) {
            auto o = permit_opts(wait, lease, forever);
            return wait_interruptibly<permit_id>(
                [&](std::stop_token stop, auto done) {
                  o.stop = std::move(stop);
                  start_acquire(s, std::move(o), std::move(done));
                },
                [&](const permit_id& got) {
                  if (got) pes(s).async_release(*got, [](std::error_code) {});
                });
          },
          py::arg("wait"), py::arg("lease"), py::arg("forever"))
      .def(
          "acquire_async",
          [](const pes& s, std::optional<double> wait, std::optional<double> lease, bool forever,
             py::object done) {
            auto o = permit_opts(wait, lease, forever);
            return start_for_python<permit_id>(
                [&](std::stop_token stop, auto finished) {
                  o.stop = std::move(stop);
                  start_acquire(s, std::move(o), std::move(finished));
                },
                std::move(done));
          },
          py::arg("wait"), py::arg("lease"), py::arg("forever"), py::arg("done"))
      .def(
          "release",
          [](const pes& s, const std::string& id) {
            wait_to_end<nothing>([&](auto done) { start_release(s, id, std::move(done)); });
          },
          py::arg("permit_id"))
      .def(
          "release_async",
          [](const pes& s, const std::string& id, py::object done) {
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) { start_release(s, id, std::move(finished)); },
                std::move(done));
          },
          py::arg("permit_id"), py::arg("done"))
      .def(
          "try_release", [](pes s, const std::string& id) { return s.try_release(id); },
          py::arg("permit_id"), release_gil())
      .def(
          "update_lease",
          [](pes s, const std::string& id, double lease) {
            auto ms = to_millis(lease, "lease");
            released_gil unlocked;
            return s.update_lease(id, ms);
          },
          py::arg("permit_id"), py::arg("lease"))
      .def("available_permits", &pes::available_permits, release_gil())
      .def("acquired_permits", &pes::acquired_permits, release_gil())
      .def(
          "set_permits", [](pes s, std::int64_t n) { s.set_permits(n); }, py::arg("permits"),
          release_gil())
      .def(
          "try_set_permits", [](pes s, std::int64_t n) { return s.try_set_permits(n); },
          py::arg("permits"), release_gil())
      .def(
          "add_permits", [](pes s, std::int64_t n) { s.add_permits(n); }, py::arg("permits"),
          release_gil());
}

void bind_latch(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;
  using relock::count_down_latch;

  py::class_<count_down_latch>(m, "CountDownLatch")
      .def_property_readonly("name", &count_down_latch::name)
      .def_property_readonly("key", &count_down_latch::key)
      .def(
          "try_set_count", [](count_down_latch l, std::int64_t n) { return l.try_set_count(n); },
          py::arg("count"), release_gil())
      .def("count_down",
           [](const count_down_latch& l) {
             wait_to_end<nothing>([&](auto done) { start_count_down(l, std::move(done)); });
           })
      .def(
          "count_down_async",
          [](const count_down_latch& l, py::object done) {
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) { start_count_down(l, std::move(finished)); },
                std::move(done));
          },
          py::arg("done"))
      .def("count", &count_down_latch::count, release_gil())
      // Java's await; None waits for ever, zero looks once.
      .def(
          "wait",
          [](const count_down_latch& l, std::optional<double> wait) {
            auto w = to_millis(wait, "timeout");
            return wait_interruptibly<bool>(
                [&](std::stop_token stop, auto done) {
                  start_await(l, w, std::move(stop), std::move(done));
                },
                [](bool) {});  // an open latch takes nothing: nothing to give back
          },
          py::arg("wait"))
      .def(
          "wait_async",
          [](const count_down_latch& l, std::optional<double> wait, py::object done) {
            auto w = to_millis(wait, "timeout");
            return start_for_python<bool>(
                [&](std::stop_token stop, auto finished) {
                  start_await(l, w, std::move(stop), std::move(finished));
                },
                std::move(done));
          },
          py::arg("wait"), py::arg("done"))
      .def(
          "delete", [](count_down_latch l) { return l.delete_latch(); }, release_gil());
}

}  // namespace

void bind_synchronizers(py::module_& m) {
  bind_semaphore(m);
  bind_permit_expirable_semaphore(m);
  bind_latch(m);

  m.def(
      "make_semaphore",
      [](const client_handle& c, const std::string& name, bool wait_when_absent) {
        return c.get().semaphore(name, {.wait_when_absent = wait_when_absent});
      },
      py::arg("client"), py::arg("name"), py::arg("wait_when_absent") = false,
      py::keep_alive<0, 1>());
  m.def(
      "make_permit_expirable_semaphore",
      [](const client_handle& c, const std::string& name, bool wait_when_absent) {
        return c.get().permit_expirable_semaphore(name, {.wait_when_absent = wait_when_absent});
      },
      py::arg("client"), py::arg("name"), py::arg("wait_when_absent") = false,
      py::keep_alive<0, 1>());
  m.def(
      "make_count_down_latch",
      [](const client_handle& c, const std::string& name) {
        return c.get().count_down_latch(name);
      },
      py::arg("client"), py::arg("name"), py::keep_alive<0, 1>());
}

}  // namespace relock::python
