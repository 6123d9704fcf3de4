// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "exec/retry_policy.hpp"

using relock::exec::attempt;
using relock::exec::decide;
using relock::exec::next_step;

TEST(retry_policy, table) {
  struct row {
    const char* why;
    attempt in;
    next_step expected;
  };
  auto a = [](auto&& set) {
    attempt x;
    set(x);
    return x;
  };
  const row rows[] = {
      {"plain reply", attempt{}, next_step::complete},
      {"server error", a([](attempt& x) { x.error_code = "ERR"; }), next_step::complete},
      {"NOSCRIPT first time", a([](attempt& x) { x.error_code = "NOSCRIPT"; }),
       next_step::load_script_and_retry},
      {"NOSCRIPT after reload", a([](attempt& x) {
         x.error_code = "NOSCRIPT";
         x.script_reloaded = true;
       }),
       next_step::complete},
      {"written acquire lost with the connection", a([](attempt& x) {
         x.connection_failed = true;
         x.written = true;
       }),
       next_step::complete},
      {"unwritten lost with the connection", a([](attempt& x) { x.connection_failed = true; }),
       next_step::retry_after_delay},
      {"idempotent written lost", a([](attempt& x) {
         x.connection_failed = true;
         x.written = true;
         x.idempotent = true;
       }),
       next_step::retry_after_delay},
      {"MOVED", a([](attempt& x) { x.error_code = "MOVED"; }), next_step::follow_moved},
      {"ASK", a([](attempt& x) { x.error_code = "ASK"; }), next_step::follow_ask},
      {"too many redirects", a([](attempt& x) {
         x.error_code = "MOVED";
         x.redirects = 5;
       }),
       next_step::complete},
      {"TRYAGAIN", a([](attempt& x) { x.error_code = "TRYAGAIN"; }), next_step::retry_after_delay},
      {"LOADING", a([](attempt& x) { x.error_code = "LOADING"; }), next_step::retry_after_delay},
      // A replica refused the write (the master moved): it did not run.
      {"READONLY", a([](attempt& x) { x.error_code = "READONLY"; }), next_step::retry_after_delay},
      // Out of time: a reply that says the command did not run is a timeout; any other reply,
      // or a lost connection, is handed over as it is.
      {"TRYAGAIN with no time left", a([](attempt& x) {
         x.error_code = "TRYAGAIN";
         x.time_left = false;
       }),
       next_step::time_out},
      {"NOSCRIPT with no time left", a([](attempt& x) {
         x.error_code = "NOSCRIPT";
         x.time_left = false;
       }),
       next_step::time_out},
      {"MOVED with no time left", a([](attempt& x) {
         x.error_code = "MOVED";
         x.time_left = false;
       }),
       next_step::time_out},
      {"a plain reply with no time left", a([](attempt& x) { x.time_left = false; }),
       next_step::complete},
      {"ERR with no time left", a([](attempt& x) {
         x.error_code = "ERR";
         x.time_left = false;
       }),
       next_step::complete},
      {"a lost connection with no time left", a([](attempt& x) {
         x.connection_failed = true;
         x.written = true;
         x.idempotent = true;
         x.time_left = false;
       }),
       next_step::complete},
  };
  for (const auto& r : rows) EXPECT_EQ(decide(r.in), r.expected) << r.why;
}

// The one list of error replies: what the executor and the blocking take both read.
TEST(retry_policy, error_meanings) {
  using relock::exec::error_meaning;
  using relock::exec::meaning_of;
  for (const char* code : {"TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY"}) {
    EXPECT_EQ(meaning_of(code), error_meaning::not_run_yet) << code;
  }
  EXPECT_EQ(meaning_of("MOVED"), error_meaning::moved);
  EXPECT_EQ(meaning_of("ASK"), error_meaning::ask);
  EXPECT_EQ(meaning_of("NOSCRIPT"), error_meaning::script_missing);
  for (const char* code : {"ERR", "WRONGTYPE", "NOPERM", "NOAUTH", ""}) {
    EXPECT_EQ(meaning_of(code), error_meaning::final) << code;
  }
  relock::exec::attempt masterdown;
  masterdown.error_code = "MASTERDOWN";
  EXPECT_EQ(decide(masterdown), next_step::retry_after_delay);
}
