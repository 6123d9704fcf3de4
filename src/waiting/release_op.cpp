// SPDX-License-Identifier: Apache-2.0
#include "waiting/release_op.hpp"

#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"
#include "containers/block_cache.hpp"
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

// One release on its way: what its send (once the watchdog lets it go) and its answer share, in
// one allocation, where each step's captures cost one of their own.
struct release_state {
  std::shared_ptr<client_core> core;
  release_request request;
  release_callback done;
  std::string latch;
  script_call call;    // sent once, by send_release
  bool known = false;  // the watchdog knew the hold
  // A copy written on a connection that then failed may still run after the one that answers:
  // its latch must outlive it, so it is left to expire instead of being deleted.
  bool resent = false;
  std::chrono::milliseconds timeout{0};
  std::chrono::milliseconds lease{0};
  std::chrono::microseconds held{0};
};

void finish_release(release_state& s, std::error_code outcome, std::string detail) {
  observe_release(*s.core, s.request, s.held, outcome);
  s.done(outcome, std::move(detail));
}

void on_release_answer(release_state& s, std::error_code ec, resp::reply r) {
  client_core& core = *s.core;
  const release_request& request = s.request;
  core.watchdog().release_answered(request.key, request.field);
  // Not confirmed: it may not have run, and the lock would stay held for its whole lease. The
  // caller hears of the failure; the release is sent again meanwhile.
  if (!request.cleanup && release_not_run(ec, r.str)) {
    release_request again = request;
    again.latch = s.latch;
    retry_release(
        s.core, std::move(again),
        std::chrono::steady_clock::now() + std::min(s.lease, core.settings().unlock_latch_ttl));
  }
  // Released on the master, but no replica acknowledged it: the caller hears so once the
  // release is booked like any other.
  const bool unsynced = ec == errc::no_synced_replicas && !r.is_error();
  if (ec && !unsynced) return finish_release(s, ec, r.str);
  if (r.is_nil()) {
    if (s.known) {
      return finish_release(s, errc::lock_lost,
                            std::string(request.kind->what) + " '" + request.key +
                                "' was no longer held by " + request.field +
                                " (its lease ran out or it was deleted)");
    }
    return finish_release(
        s, errc::not_owner,
        std::string(request.kind->what) + " '" + request.key + "' is not held by " + request.field);
  }
  if (r.integer == 1) core.watchdog().forget(request.key, request.field);
  // The release has completed: its latch has done its work, unless another copy of it may
  // still be on its way.
  if (!s.resent) core.sweeper().discard(std::move(s.latch));
  if (unsynced) {
    return finish_release(s, errc::no_synced_replicas,
                          std::string(request.kind->what) + " '" + request.key +
                              "' was released on the master, but no replica acknowledged it");
  }
  finish_release(s, {}, {});
}

void send_release(const std::shared_ptr<release_state>& s) {
  s->core->executor().eval(
      s->request.kind->release, std::move(s->call.keys), std::move(s->call.args),
      [s](std::error_code ec, resp::reply r) { on_release_answer(*s, ec, std::move(r)); },
      // A cleanup undoes a write that may not have been acknowledged: waiting for the same
      // replica again would only hold up the caller. The call holds the state (its callback)
      // for as long as it may say it resent.
      {.idempotent = true,
       .timeout = s->timeout,
       .synced = !s->request.cleanup,
       .on_resent = [state = s.get()] { state->resent = true; }});
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
  auto s = containers::make_cached<release_state>();
  s->core = core;
  s->latch = !request.latch.empty() ? std::move(request.latch)
                                    : layout::random_unlock_latch_key(request.key);
  const auto& settings = core->settings();
  s->call = request.kind->release_call(release_context{
      request.key, request.owner, request.channel, s->latch, core->publish_command(), plan.lease,
      settings.unlock_latch_ttl, queue_timing_of(*core), request.permits, request.take_back});
  s->resent = request.take_back;
  // A cleanup may queue behind the very acquire that timed out: it gets the latch's window
  // unless told otherwise.
  s->timeout = request.timeout.count() > 0 ? request.timeout
               : request.cleanup           ? settings.unlock_latch_ttl
                                           : std::chrono::milliseconds::zero();
  s->known = plan.known;
  s->lease = plan.lease;
  s->held = held;
  s->request = std::move(request);
  s->done = std::move(done);
  // The latch makes the release safe to resend after a lost connection. The watchdog sends it,
  // so that no renewal of this hold reaches Redis after it.
  core->watchdog().release(s->request.key, s->request.field, [s] { send_release(s); });
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
