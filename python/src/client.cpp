// SPDX-License-Identifier: Apache-2.0
// relock._relock.Client and Owner: the connection and who holds.
#include "client.hpp"

#include <pybind11/stl.h>

#include <relock/errors.hpp>
#include <relock/lock_info.hpp>
#include <relock/owner.hpp>
#include <relock/queue_info.hpp>

#include <string>
#include <utility>

#include "bridge.hpp"
#include "durations.hpp"

namespace relock::python {

client_handle::client_handle(relock::config settings) {
  released_gil unlocked;  // connecting may take up to connect_timeout
  client_ = std::make_unique<relock::client>(std::move(settings));
}

client_handle::~client_handle() { close(); }

void client_handle::close() {
  std::unique_ptr<relock::client> closing = std::move(client_);
  if (!closing) return;
  // Its I/O thread may be waiting for the GIL (an asyncio completion, a log line) before it can
  // finish and be joined.
  released_gil unlocked;
  closing.reset();
}

void client_handle::abandon() {
  static_cast<void>(client_.release());
  abandoned_ = true;
}

relock::client& client_handle::get() const {
  if (abandoned_) {
    throw relock::error(relock::errc::would_deadlock,
                        "this client was made before fork(): its I/O thread is in the parent "
                        "process; make a new Client in the child");
  }
  if (!client_) throw relock::error(relock::errc::cancelled, "the client is closed");
  return *client_;
}

namespace {

// A setting's value from the keyword arguments, or nothing when it is absent or None.
template <class T>
std::optional<T> setting(const py::dict& settings, const char* name) {
  if (!settings.contains(name)) return std::nullopt;
  py::object value = settings[name];
  if (value.is_none()) return std::nullopt;
  return value.cast<T>();
}

template <class Duration>
void set_duration(const py::dict& settings, const char* name, Duration& field) {
  if (auto seconds = setting<double>(settings, name)) {
    field = std::chrono::duration_cast<Duration>(to_millis(*seconds, name));
  }
}

// relock's log and lost holds, on its I/O thread, to Python callables taking the GIL.
void route_callbacks(const py::dict& settings, relock::config& c) {
  if (auto log = setting<py::object>(settings, "log")) {
    auto callable = keep_for_io_thread(*log);
    c.log = [callable](relock::log_level level, std::string_view line) {
      py::gil_scoped_acquire held;
      try {
        (*callable)(static_cast<int>(level), std::string(line));
      } catch (py::error_already_set& e) {
        e.discard_as_unraisable("relock: the log callback");
      }
    };
  }
  if (auto lost = setting<py::object>(settings, "on_lock_lost")) {
    auto callable = keep_for_io_thread(*lost);
    c.on_lock_lost = [callable](std::string_view key, std::string_view owner, std::error_code why) {
      py::gil_scoped_acquire held;
      try {
        (*callable)(std::string(key), std::string(owner),
                    python_error(std::make_exception_ptr(relock::error(why))));
      } catch (py::error_already_set& e) {
        e.discard_as_unraisable("relock: the on_lock_lost callback");
      }
    };
  }
}

relock::config make_config(const std::string& url, const py::dict& settings) {
  static const char* const known[] = {"client_name",
                                      "connect_timeout",
                                      "command_timeout",
                                      "watchdog_lease",
                                      "reconnect_min_delay",
                                      "reconnect_max_delay",
                                      "command_connections",
                                      "busy_poll",
                                      "fair_lock_wait_timeout",
                                      "sentinel_user",
                                      "sentinel_password",
                                      "tls_ca",
                                      "tls_cert",
                                      "tls_key",
                                      "tls_server_name",
                                      "tls_insecure_skip_verification",
                                      "log",
                                      "on_lock_lost"};
  for (auto item : settings) {
    auto name = item.first.cast<std::string>();
    bool found = false;
    for (const char* k : known) found = found || name == k;
    if (!found) throw relock::error(relock::errc::invalid_argument, "unknown setting: " + name);
  }
  relock::config c;
  c.url = url;
  if (auto v = setting<std::string>(settings, "client_name")) c.client_name = *v;
  set_duration(settings, "connect_timeout", c.connect_timeout);
  set_duration(settings, "command_timeout", c.command_timeout);
  set_duration(settings, "watchdog_lease", c.watchdog_lease);
  set_duration(settings, "reconnect_min_delay", c.reconnect_min_delay);
  set_duration(settings, "reconnect_max_delay", c.reconnect_max_delay);
  set_duration(settings, "fair_lock_wait_timeout", c.fair_lock_wait_timeout);
  if (auto seconds = setting<double>(settings, "busy_poll")) {
    c.busy_poll = std::chrono::microseconds(
        static_cast<std::int64_t>(to_millis(*seconds * 1000.0, "busy_poll").count()));
  }
  if (auto v = setting<std::size_t>(settings, "command_connections")) c.command_connections = *v;
  if (auto v = setting<std::string>(settings, "sentinel_user")) c.sentinel_user = *v;
  if (auto v = setting<std::string>(settings, "sentinel_password")) c.sentinel_password = *v;
  if (auto v = setting<std::string>(settings, "tls_ca")) c.tls.ca_file = *v;
  if (auto v = setting<std::string>(settings, "tls_cert")) c.tls.cert_file = *v;
  if (auto v = setting<std::string>(settings, "tls_key")) c.tls.key_file = *v;
  if (auto v = setting<std::string>(settings, "tls_server_name")) c.tls.server_name = *v;
  if (auto v = setting<bool>(settings, "tls_insecure_skip_verification")) {
    c.tls.insecure_skip_verification = *v;
  }
  route_callbacks(settings, c);
  return c;
}

// inspect's answer as plain Python data; relock/_info.py makes the dataclasses.
py::dict to_dict(const relock::lock_info& info) {
  py::list holders;
  for (const auto& h : info.holders) {
    py::list leases;
    for (const auto& lease : h.read_leases) leases.append(py::cast(seconds_or_none(lease)));
    holders.append(py::dict(py::arg("owner") = h.owner, py::arg("holds") = h.holds,
                            py::arg("side") = relock::to_string(h.side),
                            py::arg("read_leases") = leases));
  }
  py::list waiters;
  for (const auto& w : info.waiters) {
    waiters.append(py::dict(py::arg("owner") = w.owner,
                            py::arg("gives_up_at_ms") = py::cast(w.gives_up_at_ms)));
  }
  py::list permits;
  for (const auto& p : info.permits) {
    permits.append(
        py::dict(py::arg("id") = p.id, py::arg("expires_at_ms") = py::cast(p.expires_at_ms)));
  }
  return py::dict(
      py::arg("name") = info.name, py::arg("key") = info.key, py::arg("node") = info.node,
      py::arg("server") = info.server, py::arg("kind") = relock::to_string(info.kind),
      py::arg("redis_type") = info.redis_type, py::arg("mode") = py::cast(info.mode),
      py::arg("holders") = holders,
      py::arg("remaining_lease") = py::cast(seconds_or_none(info.remaining_lease)),
      py::arg("waiters") = waiters, py::arg("fencing_token") = py::cast(info.fencing_token),
      py::arg("value") = py::cast(info.value), py::arg("permits_taken") = info.permits_taken,
      py::arg("permits") = permits, py::arg("synced_replicas") = info.synced_replicas,
      py::arg("last_acknowledged") = info.last_acknowledged);
}

py::dict to_dict(const relock::queue_info& info) {
  return py::dict(py::arg("name") = info.name, py::arg("redis_type") = info.redis_type,
                  py::arg("length") = info.length, py::arg("delayed") = info.delayed,
                  py::arg("next_due_ms") = py::cast(info.next_due_ms));
}

}  // namespace

void bind_client(py::module_& m) {
  py::class_<relock::owner>(m, "Owner")
      .def(py::init([] { return relock::owner::unique(); }))
      .def(py::init<std::uint64_t>(), py::arg("id"))
      .def_static("current_thread", &relock::owner::current_thread)
      .def_property_readonly("id", &relock::owner::id)
      .def("__eq__", [](relock::owner a, relock::owner b) { return a == b; })
      .def("__hash__", [](relock::owner o) { return py::hash(py::int_(o.id())); })
      .def("__repr__", [](relock::owner o) { return "Owner(" + std::to_string(o.id()) + ")"; });

  py::class_<client_handle, std::shared_ptr<client_handle>>(m, "Client")
      .def(py::init([](const std::string& url, const py::kwargs& settings) {
             return std::make_shared<client_handle>(make_config(url, settings));
           }),
           py::arg("url"))
      .def("close", &client_handle::close)
      .def("abandon", &client_handle::abandon)
      .def_property_readonly("closed", &client_handle::closed)
      .def_property_readonly("id", [](const client_handle& c) { return c.get().id(); })
      .def_property_readonly("url", [](const client_handle& c) { return c.get().settings().url; })
      .def(
          "inspect",
          [](const client_handle& c, const std::string& name) {
            relock::lock_info info;
            {
              released_gil unlocked;
              info = c.get().inspect(name);
            }
            return to_dict(info);
          },
          py::arg("name"))
      .def(
          "inspect_queue",
          [](const client_handle& c, const std::string& name) {
            relock::queue_info info;
            {
              released_gil unlocked;
              info = c.get().inspect_queue(name);
            }
            return to_dict(info);
          },
          py::arg("name"));
}

}  // namespace relock::python
