// SPDX-License-Identifier: Apache-2.0
// A TCP proxy between relock clients and a real redis-server, for network faults: delay,
// replies dropped, a blackhole that keeps the sockets open, and resets.
//
// Every fault keeps to what TCP can do: a connection never skips bytes and goes on. A dropped
// reply (the server ran the command, the client never hears) ends its connection with a reset
// once the drop is over, as a connection whose bytes were lost would end; a blackhole holds
// what is sent both ways (a partition: nothing arrives, nothing is lost) until it lifts.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace relock::test {

// A proxy on a free loopback port that forwards each accepted connection to `target`, and
// injects network faults on command. Runs its own thread (an asio::io_context); every method is
// thread-safe and takes effect for current and future connections at once.
class fault_proxy {
 public:
  fault_proxy(std::string target_host, std::uint16_t target_port);
  ~fault_proxy();  // closes every socket and joins its thread
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;

  std::uint16_t port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  void pass();                              // forward both ways as they come (the default)
  void delay(std::chrono::milliseconds d);  // hold every chunk d before forwarding, both ways
  void drop_replies();  // server->client bytes discarded; those connections reset once it ends
  void blackhole();     // nothing delivered either way, sockets open, all delivered once lifted
  void reset_all();     // every open connection closed with RST

  // One connection's partition while the client goes on over new ones: the connections open
  // now hold what the server sends them (hold_replies) and also what their client sends
  // (hold_requests) until release_held; connections accepted later pass. cut_held closes the
  // held connections' client sides with RST (the client sees a lost connection) and keeps their
  // server sides: what they hold still reaches the server at release_held, as a healed
  // partition delivers bytes that a client gave up on. Replies for a cut client are read and
  // counted (orphan_reply_bytes), never delivered.
  void hold_replies();
  void hold_requests();
  void cut_held();
  void release_held();
  std::size_t held_request_bytes() const;
  std::size_t held_reply_bytes() const;
  std::uint64_t orphan_reply_bytes() const;
  std::size_t connections() const;  // pairs open now
  std::uint64_t accepted() const;   // connections accepted so far

  struct state;  // shared with the sessions, which may outlive a call

 private:
  std::shared_ptr<state> state_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace relock::test
