// SPDX-License-Identifier: Apache-2.0
#include "exec/retry_policy.hpp"

namespace relock::exec {

next_step decide(const attempt& a) {
  if (!a.time_left) return next_step::complete;
  if (a.connection_failed) {
    // An acquire or release that may have run must never be sent again blindly (data-layout §1);
    // only what never left us, or what is harmless twice, may go again.
    return (!a.written || a.idempotent) ? next_step::retry_after_delay : next_step::complete;
  }
  // These errors mean the command did not run, so another attempt is always safe.
  if (a.error_code == "NOSCRIPT") {
    return a.script_reloaded ? next_step::complete : next_step::load_script_and_retry;
  }
  if (a.error_code == "MOVED") {
    return a.redirects < max_redirects ? next_step::follow_moved : next_step::complete;
  }
  if (a.error_code == "ASK") {
    return a.redirects < max_redirects ? next_step::follow_ask : next_step::complete;
  }
  // READONLY: a replica refused the write (the master moved; the caller looks for the new one).
  if (a.error_code == "TRYAGAIN" || a.error_code == "CLUSTERDOWN" || a.error_code == "LOADING" ||
      a.error_code == "READONLY") {
    return next_step::retry_after_delay;
  }
  return next_step::complete;
}

}  // namespace relock::exec
