// SPDX-License-Identifier: Apache-2.0
// relock._relock.BlockingQueue and DelayedQueue: offers, polls and takes, blocking and for
// asyncio, through bridge.hpp; the one-round-trip calls with the GIL released. Values are bytes
// both ways (pybind11 takes bytes or str for a std::string; what comes back is made bytes here,
// never decoded).
#include <pybind11/stl.h>

#include <relock/blocking_queue.hpp>
#include <relock/delayed_queue.hpp>
#include <relock/with_detail.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include "bridge.hpp"
#include "client.hpp"
#include "durations.hpp"

namespace relock::python {

namespace {

using millis = std::chrono::milliseconds;

// What a poll or take answers: an element, or none (a poll whose wait ran out).
struct element {
  std::optional<std::string> value;
};

// Found by bridge.hpp's start_for_python through ADL: bytes, not a decoded str.
py::object to_python(const element& e) {
  if (!e.value) return py::none();
  return py::bytes(*e.value);
}

// A take stopped by Ctrl-C gets no element from the core (it puts back one the server handed it
// late), but one that arrived in the same instant as the interrupt is the caller's: offered back.
// relock has no public push to the head, so it goes to the tail.
void put_back(relock::blocking_queue q, element e) {
  if (e.value) q.async_offer(std::move(*e.value), [](std::error_code) {});
}

// `wait` none: no wait (LPOP), as blocking_queue::async_poll.
template <class Done>
void start_poll(relock::blocking_queue q, std::optional<millis> wait, std::stop_token stop,
                Done done) {
  q.async_poll(
      wait, std::move(stop),
      relock::with_detail([done](std::exception_ptr e, std::optional<std::string> v) mutable {
        done(std::move(e), element{std::move(v)});
      }));
}

template <class Done>
void start_take(relock::blocking_queue q, std::stop_token stop, Done done) {
  q.async_take(std::move(stop),
               relock::with_detail([done](std::exception_ptr e, std::string v) mutable {
                 done(e, e ? element{} : element{std::move(v)});
               }));
}

template <class Done>
void start_offer(relock::blocking_queue q, std::string value, Done done) {
  q.async_offer(std::move(value), relock::with_detail([done](std::exception_ptr e) mutable {
                  done(std::move(e), nothing{});
                }));
}

template <class Done>
void start_offer(relock::delayed_queue q, std::string value, millis delay, Done done) {
  q.async_offer(std::move(value), delay, relock::with_detail([done](std::exception_ptr e) mutable {
                  done(std::move(e), nothing{});
                }));
}

void bind_blocking_queue(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;
  using relock::blocking_queue;

  py::class_<blocking_queue>(m, "BlockingQueue")
      .def_property_readonly("name", &blocking_queue::name)
      .def_property_readonly("key", &blocking_queue::key)
      .def(
          "offer",
          [](const blocking_queue& q, std::string value) {
            wait_to_end<nothing>(
                [&](auto done) { start_offer(q, std::move(value), std::move(done)); });
            return true;  // an unbounded list takes every value (Redisson's offer)
          },
          py::arg("value"))
      .def(
          "offer_async",
          [](const blocking_queue& q, std::string value, py::object done) {
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) {
                  start_offer(q, std::move(value), std::move(finished));
                },
                std::move(done));
          },
          py::arg("value"), py::arg("done"))
      .def(
          "poll",
          [](const blocking_queue& q, std::optional<double> wait) {
            auto w = to_millis(wait, "timeout");
            return to_python(wait_interruptibly<element>(
                [&](std::stop_token stop, auto done) {
                  start_poll(q, w, std::move(stop), std::move(done));
                },
                [&](element e) { put_back(q, std::move(e)); }));
          },
          py::arg("wait"))
      .def(
          "poll_async",
          [](const blocking_queue& q, std::optional<double> wait, py::object done) {
            auto w = to_millis(wait, "timeout");
            return start_for_python<element>(
                [&](std::stop_token stop, auto finished) {
                  start_poll(q, w, std::move(stop), std::move(finished));
                },
                std::move(done));
          },
          py::arg("wait"), py::arg("done"))
      .def("take",
           [](const blocking_queue& q) {
             return to_python(wait_interruptibly<element>(
                 [&](std::stop_token stop, auto done) {
                   start_take(q, std::move(stop), std::move(done));
                 },
                 [&](element e) { put_back(q, std::move(e)); }));
           })
      .def(
          "take_async",
          [](const blocking_queue& q, py::object done) {
            return start_for_python<element>(
                [&](std::stop_token stop, auto finished) {
                  start_take(q, std::move(stop), std::move(finished));
                },
                std::move(done));
          },
          py::arg("done"))
      .def("size", &blocking_queue::size, release_gil())
      .def("peek",
           [](const blocking_queue& q) {
             element e;
             {
               released_gil unlocked;
               e.value = q.peek();
             }
             return to_python(e);
           })
      .def(
          "remove", [](blocking_queue q, const std::string& value) { return q.remove(value); },
          py::arg("value"), release_gil())
      .def(
          "clear", [](blocking_queue q) { return q.clear(); }, release_gil());
}

void bind_delayed_queue(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;
  using relock::delayed_queue;

  py::class_<delayed_queue>(m, "DelayedQueue")
      .def_property_readonly("destination", &delayed_queue::destination)
      .def(
          "offer",
          [](const delayed_queue& q, std::string value, double delay) {
            auto d = to_millis(delay, "delay");
            wait_to_end<nothing>(
                [&](auto done) { start_offer(q, std::move(value), d, std::move(done)); });
          },
          py::arg("value"), py::arg("delay"))
      .def(
          "offer_async",
          [](const delayed_queue& q, std::string value, double delay, py::object done) {
            auto d = to_millis(delay, "delay");
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) {
                  start_offer(q, std::move(value), d, std::move(finished));
                },
                std::move(done));
          },
          py::arg("value"), py::arg("delay"), py::arg("done"))
      .def("size", &delayed_queue::size, release_gil())
      .def(
          "contains",
          [](const delayed_queue& q, const std::string& value) { return q.contains(value); },
          py::arg("value"), release_gil())
      .def(
          "remove", [](delayed_queue q, const std::string& value) { return q.remove(value); },
          py::arg("value"), release_gil())
      .def(
          "clear", [](delayed_queue q) { q.clear(); }, release_gil())
      .def(
          "destroy", [](delayed_queue q) { q.destroy(); }, release_gil());
}

}  // namespace

void bind_queues(py::module_& m) {
  bind_blocking_queue(m);
  bind_delayed_queue(m);

  m.def(
      "make_blocking_queue",
      [](const client_handle& c, const std::string& name) { return c.get().blocking_queue(name); },
      py::arg("client"), py::arg("name"), py::keep_alive<0, 1>());
  m.def(
      "make_delayed_queue",
      [](const client_handle& c, const std::string& destination) {
        return c.get().delayed_queue(destination);
      },
      py::arg("client"), py::arg("destination"), py::keep_alive<0, 1>());
}

}  // namespace relock::python
