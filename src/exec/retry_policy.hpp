// SPDX-License-Identifier: Apache-2.0
// The one place that decides what happens after an attempt: finish, reload a script, follow a
// redirect, or give up. A pure function so that a table can test every case.
#pragma once

#include <string_view>

namespace relock::exec {

enum class next_step {
  complete,               // hand the reply (or error) to the caller
  load_script_and_retry,  // NOSCRIPT: SCRIPT LOAD, then the same EVALSHA once more
  follow_moved,           // Cluster: the slot lives elsewhere now; refresh and resend there
  follow_ask,             // Cluster: resend once to the named node behind ASKING
  retry_after_delay,      // TRYAGAIN / CLUSTERDOWN / LOADING / READONLY: it did not run
  time_out,  // one of those came after the deadline: the caller hears errc::timeout, since the
             // command did not run and its time is up (never the server's word as an error)
};

struct attempt {
  std::string_view error_code;  // first word of an error reply; empty when none
  bool connection_failed = false;
  bool written = false;          // the request reached the socket before the failure
  bool idempotent = false;       // safe to run twice (reads, SCRIPT LOAD)
  bool script_reloaded = false;  // NOSCRIPT was already answered once for this call
  int redirects = 0;             // MOVED/ASK already followed for this call
  bool time_left = true;         // the caller's deadline has not passed
};

constexpr int max_redirects = 5;

// What an error reply's first word says about the command that got it: the one list every
// request path reads (scripts and commands through decide(), blocking takes directly).
enum class error_meaning {
  final,          // the command ran, or never will: the caller hears the error
  not_run_yet,    // TRYAGAIN / CLUSTERDOWN / LOADING / MASTERDOWN / READONLY: try later
  moved,          // MOVED: the slot lives elsewhere now
  ask,            // ASK: once to the node named, behind ASKING
  script_missing  // NOSCRIPT: load it, then the same call
};
error_meaning meaning_of(std::string_view error_code);

next_step decide(const attempt& a);

}  // namespace relock::exec
