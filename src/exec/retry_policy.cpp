// SPDX-License-Identifier: Apache-2.0
#include "exec/retry_policy.hpp"

namespace relock::exec {

error_meaning meaning_of(std::string_view code) {
  if (code == "NOSCRIPT") return error_meaning::script_missing;
  if (code == "MOVED") return error_meaning::moved;
  if (code == "ASK") return error_meaning::ask;
  // These mean the command did not run: the server is loading, a slot is on its way, the node
  // lost its master or is no longer one (READONLY: a replica refused the write).
  if (code == "TRYAGAIN" || code == "CLUSTERDOWN" || code == "LOADING" || code == "MASTERDOWN" ||
      code == "READONLY") {
    return error_meaning::not_run_yet;
  }
  return error_meaning::final;
}

next_step decide(const attempt& a) {
  if (!a.time_left) {
    // A reply that asks for one more step (NOSCRIPT to a script the server lost, a redirect, a
    // TRYAGAIN) came too late to take it: the command did not run and its time is up. Ten
    // thousand EVALSHAs at once on a new server answered NOSCRIPT after their 3 s, and the
    // callers heard "server error".
    const bool ran_or_never =
        a.connection_failed || meaning_of(a.error_code) == error_meaning::final;
    return ran_or_never ? next_step::complete : next_step::time_out;
  }
  if (a.connection_failed) {
    // An acquire or release that may have run must never be sent again blindly (data-layout §1);
    // only what never left us, or what is harmless twice, may go again.
    return (!a.written || a.idempotent) ? next_step::retry_after_delay : next_step::complete;
  }
  // These errors mean the command did not run, so another attempt is always safe.
  switch (meaning_of(a.error_code)) {
    case error_meaning::script_missing:
      return a.script_reloaded ? next_step::complete : next_step::load_script_and_retry;
    case error_meaning::moved:
      return a.redirects < max_redirects ? next_step::follow_moved : next_step::complete;
    case error_meaning::ask:
      return a.redirects < max_redirects ? next_step::follow_ask : next_step::complete;
    case error_meaning::not_run_yet:
      return next_step::retry_after_delay;
    case error_meaning::final:
      break;
  }
  return next_step::complete;
}

}  // namespace relock::exec
