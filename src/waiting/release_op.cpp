// SPDX-License-Identifier: Apache-2.0
#include "waiting/release_op.hpp"

#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"
#include "exec/retry_policy.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "waiting/release_retry.hpp"

namespace relock::detail::waiting {

bool release_not_run(std::error_code ec, std::string_view detail) {
  if (ec == errc::timeout || ec == errc::connection) return true;
  if (!ec) return false;
  const std::string_view code = detail.substr(0, detail.find(' '));
  // BUSY: a script runs past busy-reply-threshold; OOM: over maxmemory, a writing script is
  // refused before it runs.
  return code == "BUSY" || code == "OOM" ||
         exec::meaning_of(code) == exec::error_meaning::not_run_yet;
}

namespace {

// Tells the client's observer, if it has one, how the release of `request` ended. A cleanup is
// relock's own undo of a grant, no caller's release: it is not reported. Called in place at each
// end rather than by wrapping `done`, which would cost an allocation per release.
void observe_release(const client_core& core, const release_request& request,
                     std::chrono::microseconds held, std::error_code ec) {
  auto* o = core.settings().observer.get();
  if (o == nullptr || request.cleanup) return;
  o->on_release({.kind = request.kind->what, .key = request.key, .error = ec, .held = held});
}

// How long the hold being released was held, for the observer (none set: not measured).
std::chrono::microseconds held_for(const client_core& core,
                                   const renewal::watchdog::release_plan& plan) {
  if (!core.settings().observer || !plan.taken_at) return std::chrono::microseconds(0);
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               *plan.taken_at);
}

}  // namespace

void release_now(const std::shared_ptr<client_core>& core, release_request request,
                 release_callback done) {
  auto plan = request.cleanup ? renewal::watchdog::release_plan{}
                              : core->watchdog().releasing(request.key, request.field);
  const auto held = held_for(*core, plan);
  if (request.cleanup) plan.lease = core->settings().watchdog_lease;
  if (plan.lost) {
    observe_release(*core, request, held, errc::lock_lost);
    return done(errc::lock_lost, std::string(request.kind->what) + " '" + request.key +
                                     "' held by " + request.field +
                                     " was lost before this unlock (it expired or was deleted)");
  }
  std::string latch =
      !request.latch.empty() ? request.latch : layout::random_unlock_latch_key(request.key);
  const auto& settings = core->settings();
  const bool cleanup = request.cleanup;
  auto call = request.kind->release_call(release_context{
      request.key, request.owner, request.channel, latch, core->publish_command(), plan.lease,
      settings.unlock_latch_ttl, queue_timing_of(*core), request.permits, request.take_back});
  // A copy written on a connection that then failed may still run after the one that answers:
  // its latch must outlive it, so it is left to expire instead of being deleted.
  auto resent = std::make_shared<bool>(request.take_back);
  // A cleanup may queue behind the very acquire that timed out: it gets the latch's window
  // unless told otherwise.
  const auto timeout = request.timeout.count() > 0 ? request.timeout
                       : cleanup                   ? settings.unlock_latch_ttl
                                                   : std::chrono::milliseconds::zero();
  // The latch makes the release safe to resend after a lost connection. The watchdog sends it,
  // so that no renewal of this hold reaches Redis after it.
  const std::string key = request.key;
  const std::string field = request.field;
  core->watchdog().release(
      key, field,
      [core, call = std::move(call), request = std::move(request), known = plan.known,
       latch = std::move(latch), done = std::move(done), cleanup, resent, timeout,
       lease = plan.lease, held]() mutable {
        core->executor().eval(
            request.kind->release, std::move(call.keys), std::move(call.args),
            [core, request = std::move(request), known, latch = std::move(latch),
             done = std::move(done), resent, lease,
             held](std::error_code ec, resp::reply r) mutable {
              core->watchdog().release_answered(request.key, request.field);
              auto finish = [&](std::error_code outcome, std::string detail) {
                observe_release(*core, request, held, outcome);
                done(outcome, std::move(detail));
              };
              // Not confirmed: it may not have run, and the lock would stay held for its whole
              // lease. The caller hears of the failure; the release is sent again meanwhile.
              if (!request.cleanup && release_not_run(ec, r.str)) {
                const auto& settings = core->settings();
                release_request again = request;
                again.latch = latch;
                retry_release(
                    core, std::move(again),
                    std::chrono::steady_clock::now() + std::min(lease, settings.unlock_latch_ttl));
              }
              // Released on the master, but no replica acknowledged it: the caller hears so once
              // the release is booked like any other.
              const bool unsynced = ec == errc::no_synced_replicas && !r.is_error();
              if (ec && !unsynced) return finish(ec, r.str);
              if (r.is_nil()) {
                if (known) {
                  return finish(errc::lock_lost, std::string(request.kind->what) + " '" +
                                                     request.key + "' was no longer held by " +
                                                     request.field +
                                                     " (its lease ran out or it was deleted)");
                }
                return finish(errc::not_owner, std::string(request.kind->what) + " '" +
                                                   request.key + "' is not held by " +
                                                   request.field);
              }
              if (r.integer == 1) core->watchdog().forget(request.key, request.field);
              // The release has completed: its latch has done its work, unless another copy of
              // it may still be on its way.
              if (!*resent) core->sweeper().discard(std::move(latch));
              if (unsynced) {
                return finish(errc::no_synced_replicas,
                              std::string(request.kind->what) + " '" + request.key +
                                  "' was released on the master, but no replica acknowledged it");
              }
              finish({}, {});
            },
            // A cleanup undoes a write that may not have been acknowledged: waiting for the same
            // replica again would only hold up the caller.
            {.idempotent = true, .timeout = timeout, .synced = !cleanup, .on_resent = [resent] {
               *resent = true;
             }});
      });
}

void start_release(std::shared_ptr<client_core> core, release_request request,
                   release_callback done) {
  client_core& door = *core;
  door.enter([core = std::move(core), request = std::move(request),
              done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, "the client has been destroyed");
    release_now(core, std::move(request), core->guard(std::move(done)));
  });
}

}  // namespace relock::detail::waiting
