// SPDX-License-Identifier: Apache-2.0
// How a Python caller waits for one relock async operation: every waiting call of the module
// goes through here, the blocking ones and the asyncio ones alike.
//
// An operation is a `start(std::stop_token, handler)` that begins a relock async call whose
// handler, called once on relock's I/O thread, takes (std::exception_ptr, T): a relock::error
// (relock::with_detail) or null, and the value. That thread never holds the GIL: a blocking
// caller waits with the GIL released, and an asyncio callback takes the GIL to run.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <utility>

#include "errors.hpp"

namespace relock::python {

namespace py = pybind11;

// How many threads are inside a released_gil now.
std::atomic<int>& threads_outside_gil();

// The GIL released for a call into relock, counted so that the interpreter's exit can wait for
// every such thread to be back (wait_for_threads_back, from relock/_client.py's atexit): CPython
// ends a thread that retakes the GIL during finalization with pthread_exit, and from the
// destructor of a plain gil_scoped_release that unwinding is std::terminate (pybind11 #2215).
// Members: the count goes up before the GIL is released, and down after it is taken back.
class released_gil {
 public:
  released_gil() = default;
  released_gil(const released_gil&) = delete;
  released_gil& operator=(const released_gil&) = delete;

 private:
  struct counted {
    counted() { threads_outside_gil().fetch_add(1); }
    ~counted() { threads_outside_gil().fetch_sub(1); }
  } count_;
  py::gil_scoped_release release_;
};

// With the GIL released, waits up to `seconds` for every other thread in a released_gil to be
// back; whether they all were.
bool wait_for_threads_back(double seconds);

// A value-less operation's T.
struct nothing {};

inline py::object to_python(nothing) { return py::none(); }
template <class T>
py::object to_python(const T& value) {
  return py::cast(value);
}

// Ends a started operation's wait early, leaving nothing held (errc::cancelled): asyncio's task
// cancellation, from the event loop's thread.
class cancel_handle {
 public:
  std::stop_token token() const { return source_.get_token(); }
  void cancel() { source_.request_stop(); }

 private:
  std::stop_source source_;
};

// Runs the operation and waits for its end with the GIL released. Every 50 ms it takes the GIL
// to let Python run its signal handlers: when one raises (Ctrl-C's KeyboardInterrupt), the wait
// is stopped, whatever the operation got anyway (a lock granted in the same instant) is handed
// to `undo`, and the Python exception goes on. A relock failure is thrown as relock::error.
template <class T, class Start, class Undo>
T wait_interruptibly(Start&& start, Undo&& undo) {
  struct state {
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;
    std::exception_ptr failure;
    T value{};
  };
  auto shared = std::make_shared<state>();
  std::stop_source stop;
  std::optional<py::error_already_set> interrupted;
  {
    released_gil unlocked;
    start(stop.get_token(), [shared](std::exception_ptr failure, T value) {
      {
        std::lock_guard guard(shared->mutex);
        shared->failure = std::move(failure);
        shared->value = std::move(value);
        shared->done = true;
      }
      // Outside the lock: a waiter woken while it is still held would find it taken and sleep
      // once more (bench/RESULTS.md, Python: 6.3 context switches per pair instead of 3.6).
      shared->ended.notify_all();
    });
    std::unique_lock guard(shared->mutex);
    while (!shared->ended.wait_for(guard, std::chrono::milliseconds(50),
                                   [&] { return shared->done; })) {
      if (interrupted) continue;  // stopped: only the operation's end is left to wait for
      guard.unlock();
      {
        py::gil_scoped_acquire held;
        if (PyErr_CheckSignals() != 0) interrupted.emplace();  // takes the pending exception
      }
      if (interrupted) stop.request_stop();
      guard.lock();
    }
  }
  if (interrupted) {
    if (!shared->failure) {
      released_gil unlocked;
      undo(shared->value);
    }
    throw std::move(*interrupted);
  }
  if (shared->failure) std::rethrow_exception(shared->failure);
  return std::move(shared->value);
}

// The same for an operation that cannot be stopped (a release, an offer: one round trip within
// the command timeout): the GIL is released while it runs.
template <class T, class Start>
T wait_to_end(Start&& start) {
  return wait_interruptibly<T>([&](std::stop_token, auto handler) { start(std::move(handler)); },
                               [](const T&) {});
}

// A Python callable kept alive by relock's handlers, which run without the GIL: its last
// reference is dropped with the GIL taken.
inline std::shared_ptr<py::object> keep_for_io_thread(py::object callable) {
  return {new py::object(std::move(callable)), [](py::object* object) {
            py::gil_scoped_acquire held;
            delete object;
          }};
}

// Starts the operation for asyncio: `done(error, value)` is called once, on relock's I/O
// thread with the GIL held (python/relock/_aio.py hands it to the event loop), `error` a
// relock.errors exception or None. The returned handle stops the wait.
template <class T, class Start>
std::shared_ptr<cancel_handle> start_for_python(Start&& start, py::object done) {
  auto handle = std::make_shared<cancel_handle>();
  auto callback = keep_for_io_thread(std::move(done));
  released_gil unlocked;
  start(handle->token(), [callback](std::exception_ptr failure, T value) {
    py::gil_scoped_acquire held;
    try {
      py::object error = failure ? python_error(failure) : py::none();
      py::object result = failure ? py::none() : to_python(value);
      (*callback)(error, result);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("relock: an asyncio completion");
    }
  });
  return handle;
}

}  // namespace relock::python
