// SPDX-License-Identifier: Apache-2.0
// relock._relock.Mutex (every lock kind, and the sides of a read-write lock), FencedLock and
// LockSet (multi-lock, RedLock): acquire and release, blocking and for asyncio, and the
// queries. An owner is a relock.Owner's number; None is the calling thread.
#include <pybind11/stl.h>

#include <relock/fenced_lock.hpp>
#include <relock/lock.hpp>
#include <relock/multi_lock.hpp>
#include <relock/read_write_lock.hpp>
#include <relock/red_lock.hpp>
#include <relock/with_detail.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bridge.hpp"
#include "client.hpp"
#include "durations.hpp"

namespace relock::python {

namespace {

using token_result = std::optional<std::int64_t>;

relock::owner owner_of(std::optional<std::uint64_t> id) {
  return id ? relock::owner(*id) : relock::owner::current_thread();
}

relock::lock_options options(std::optional<double> wait, std::optional<double> lease,
                             std::stop_token stop) {
  relock::lock_options o;
  o.wait = to_millis(wait, "timeout");
  o.lease = to_millis(lease, "lease");
  o.stop = std::move(stop);
  return o;
}

// One acquire: `forever` waits with no deadline (wait must be None); otherwise it tries once
// (wait None) or for `wait`, and a lock still held elsewhere then is false, not an error.
template <class Lockable, class Done>
void start_acquire(Lockable lock, relock::owner who, relock::lock_options o, bool forever,
                   Done done) {
  if (forever) {
    lock.async_lock(who, std::move(o),
                    relock::with_detail([done](std::exception_ptr e) mutable { done(e, !e); }));
  } else {
    lock.async_try_lock(
        who, std::move(o),
        relock::with_detail([done](std::exception_ptr e, bool got) mutable { done(e, got); }));
  }
}

template <class Done>
void start_token_acquire(relock::fenced_lock lock, relock::owner who, relock::lock_options o,
                         bool forever, Done done) {
  if (forever) {
    lock.async_lock_and_get_token(
        who, std::move(o),
        relock::with_detail([done](std::exception_ptr e, std::int64_t token) mutable {
          done(e, e ? token_result() : token_result(token));
        }));
  } else {
    lock.async_try_lock_and_get_token(
        who, std::move(o),
        relock::with_detail([done](std::exception_ptr e, token_result t) mutable { done(e, t); }));
  }
}

template <class Lockable, class Done>
void start_release(Lockable lock, relock::owner who, Done done) {
  // A lock set's unlock also names the members that failed; the error says it all here.
  lock.async_unlock(who, relock::with_detail([done](std::exception_ptr e, auto&&...) mutable {
                      done(e, nothing{});
                    }));
}

// Gives back a hold the caller no longer wants (an interrupted blocking acquire); its failure is
// the watchdog's to report.
template <class Lockable>
void release_quietly(Lockable lock, relock::owner who) {
  lock.async_unlock(who, [](std::error_code, auto&&...) {});
}

// acquire / acquire_async / release / release_async for a Lockable (relock::mutex or
// relock::lock_set).
template <class Lockable, class... Extra>
void bind_hold(py::class_<Lockable, Extra...>& cls) {
  cls.def(
         "acquire",
         [](const Lockable& lock, std::optional<std::uint64_t> owner_id, std::optional<double> wait,
            std::optional<double> lease, bool forever) {
           relock::owner who = owner_of(owner_id);
           auto o = options(wait, lease, {});
           return wait_interruptibly<bool>(
               [&](std::stop_token stop, auto done) {
                 o.stop = std::move(stop);
                 start_acquire(lock, who, std::move(o), forever, std::move(done));
               },
               [&](bool got) {
                 if (got) release_quietly(lock, who);
               });
         },
         py::arg("owner"), py::arg("wait"), py::arg("lease"), py::arg("forever"))
      .def(
          "acquire_async",
          [](const Lockable& lock, std::uint64_t owner_id, std::optional<double> wait,
             std::optional<double> lease, bool forever, py::object done) {
            auto o = options(wait, lease, {});
            return start_for_python<bool>(
                [&](std::stop_token stop, auto finished) {
                  o.stop = std::move(stop);
                  start_acquire(lock, relock::owner(owner_id), std::move(o), forever,
                                std::move(finished));
                },
                std::move(done));
          },
          py::arg("owner"), py::arg("wait"), py::arg("lease"), py::arg("forever"), py::arg("done"))
      .def(
          "release",
          [](const Lockable& lock, std::optional<std::uint64_t> owner_id) {
            relock::owner who = owner_of(owner_id);
            wait_to_end<nothing>([&](auto done) { start_release(lock, who, std::move(done)); });
          },
          py::arg("owner"))
      .def(
          "release_async",
          [](const Lockable& lock, std::uint64_t owner_id, py::object done) {
            return start_for_python<nothing>(
                [&](std::stop_token, auto finished) {
                  start_release(lock, relock::owner(owner_id), std::move(finished));
                },
                std::move(done));
          },
          py::arg("owner"), py::arg("done"));
}

relock::mutex make_lock(const client_handle& c, const std::string& kind, const std::string& name) {
  relock::client& client = c.get();
  if (kind == "reentrant") return client.lock(name);
  if (kind == "non_reentrant") return client.non_reentrant_lock(name);
  if (kind == "fair") return client.fair_lock(name);
  if (kind == "non_reentrant_fair") return client.non_reentrant_fair_lock(name);
  if (kind == "spin") return client.spin_lock(name);
  if (kind == "read") return client.read_write_lock(name).read_lock();
  if (kind == "write") return client.read_write_lock(name).write_lock();
  throw relock::error(relock::errc::invalid_argument, "unknown lock kind: " + kind);
}

std::vector<relock::mutex> members_of(const py::list& locks) {
  std::vector<relock::mutex> members;
  for (auto item : locks) members.push_back(item.cast<relock::mutex>());
  return members;
}

}  // namespace

void bind_locks(py::module_& m) {
  using release_gil = py::call_guard<released_gil>;

  py::class_<cancel_handle, std::shared_ptr<cancel_handle>>(m, "CancelHandle")
      .def("cancel", &cancel_handle::cancel);

  py::class_<relock::mutex> mutex(m, "Mutex");
  bind_hold(mutex);
  mutex.def_property_readonly("name", &relock::mutex::name)
      .def_property_readonly("key", &relock::mutex::key)
      .def("is_locked", &relock::mutex::is_locked, release_gil())
      .def(
          "is_held_by",
          [](const relock::mutex& l, std::optional<std::uint64_t> owner_id) {
            relock::owner who = owner_of(owner_id);
            released_gil unlocked;
            return l.is_held_by(who);
          },
          py::arg("owner"))
      .def(
          "hold_count",
          [](const relock::mutex& l, std::optional<std::uint64_t> owner_id) {
            relock::owner who = owner_of(owner_id);
            released_gil unlocked;
            return l.hold_count(who);
          },
          py::arg("owner"))
      .def(
          "is_held_by_field",
          [](const relock::mutex& l, const std::string& field) { return l.is_held_by(field); },
          py::arg("field"), release_gil())
      .def(
          "owner_field",
          [](const relock::mutex& l, std::optional<std::uint64_t> owner_id) {
            return l.owner_field(owner_of(owner_id));
          },
          py::arg("owner"))
      .def("force_unlock", &relock::mutex::force_unlock, release_gil())
      .def("remaining_lease",
           [](const relock::mutex& l) {
             std::optional<std::chrono::milliseconds> left;
             {
               released_gil unlocked;
               left = l.remaining_lease();
             }
             return seconds_or_none(left);
           })
      .def(
          "valid_for",
          [](const relock::mutex& l, std::optional<std::uint64_t> owner_id) {
            relock::owner who = owner_of(owner_id);
            std::optional<std::chrono::milliseconds> left;
            {
              released_gil unlocked;
              left = l.valid_for(who);
            }
            return seconds_or_none(left);
          },
          py::arg("owner"));

  py::class_<relock::fenced_lock, relock::mutex>(m, "FencedLock")
      .def(
          "acquire_token",
          [](const relock::fenced_lock& lock, std::optional<std::uint64_t> owner_id,
             std::optional<double> wait, std::optional<double> lease, bool forever) {
            relock::owner who = owner_of(owner_id);
            auto o = options(wait, lease, {});
            return wait_interruptibly<token_result>(
                [&](std::stop_token stop, auto done) {
                  o.stop = std::move(stop);
                  start_token_acquire(lock, who, std::move(o), forever, std::move(done));
                },
                [&](const token_result& got) {
                  if (got) release_quietly(relock::mutex(lock), who);
                });
          },
          py::arg("owner"), py::arg("wait"), py::arg("lease"), py::arg("forever"))
      .def(
          "acquire_token_async",
          [](const relock::fenced_lock& lock, std::uint64_t owner_id, std::optional<double> wait,
             std::optional<double> lease, bool forever, py::object done) {
            auto o = options(wait, lease, {});
            return start_for_python<token_result>(
                [&](std::stop_token stop, auto finished) {
                  o.stop = std::move(stop);
                  start_token_acquire(lock, relock::owner(owner_id), std::move(o), forever,
                                      std::move(finished));
                },
                std::move(done));
          },
          py::arg("owner"), py::arg("wait"), py::arg("lease"), py::arg("forever"), py::arg("done"))
      .def(
          "fence",
          [](const relock::fenced_lock& l, std::optional<std::uint64_t> owner_id) {
            relock::owner who = owner_of(owner_id);
            released_gil unlocked;
            return l.fence(who);
          },
          py::arg("owner"));

  py::class_<relock::lock_set> lock_set(m, "LockSet");
  bind_hold(lock_set);
  lock_set.def_property_readonly("size",
                                 [](const relock::lock_set& s) { return s.members().size(); });

  m.def("make_lock", &make_lock, py::arg("client"), py::arg("kind"), py::arg("name"),
        py::keep_alive<0, 1>());
  m.def(
      "make_fenced_lock",
      [](const client_handle& c, const std::string& name) { return c.get().fenced_lock(name); },
      py::arg("client"), py::arg("name"), py::keep_alive<0, 1>());
  m.def(
      "make_multi_lock",
      [](const py::list& locks) -> relock::lock_set {
        return relock::multi_lock(members_of(locks));
      },
      py::arg("locks"));
  m.def(
      "make_red_lock",
      [](const py::list& locks) -> relock::lock_set { return relock::red_lock(members_of(locks)); },
      py::arg("locks"));
}

}  // namespace relock::python
