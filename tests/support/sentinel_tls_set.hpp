// SPDX-License-Identifier: Apache-2.0
// A Sentinel deployment over TLS for one test: a master and a replica watched by 3 sentinels,
// where the sentinels, the data nodes or both listen for TLS beside their plain ports (which the
// fixture's own checks keep using), with the certificates of a tls_files (they name localhost,
// not 127.0.0.1).
//
// When the data nodes speak TLS, everything that reaches them does: replication and the
// sentinels' links (tls-replication, which makes the sentinels reach each other by TLS too). And
// they go by the name the certificate carries: the sentinels monitor localhost with
// resolve-hostnames and announce-hostnames on, and the replica announces itself as localhost
// (replica-announce-ip), so every address Sentinel gives a client, before and after a
// failover, is a name that verifies. With plain data nodes everything is 127.0.0.1, and so it
// is with TLS ones when asked (by_name false), for a client that must then be told the name.
//
// Not shared, unlike shared_sentinel_set(): it starts in ~2-3 s (the sentinels find each other
// by hello messages every 2 s) and is gone with the object. Thread-safety: none; the servers
// die with the thread that started them (server_process).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_files.hpp"

namespace relock::test {

// Which side of the deployment listens for TLS, as rediss-sentinel://...?tls= names it.
enum class tls_side { both, sentinels, data };

class sentinel_tls_set {
 public:
  // Returns once every sentinel names the master, counts its replica online and knows the
  // other sentinels. Throws std::runtime_error with the logs' tails otherwise.
  // `by_name` false: the TLS data nodes go by 127.0.0.1 like the others (resolve-hostnames
  // off, no replica-announce-ip), an address the certificate does not name.
  sentinel_tls_set(const tls_files& files, tls_side side, bool by_name = true);
  ~sentinel_tls_set();
  sentinel_tls_set(const sentinel_tls_set&) = delete;
  sentinel_tls_set& operator=(const sentinel_tls_set&) = delete;

  static constexpr const char* master_name = "relock-tls";

  // rediss-sentinel://HOST:PORT,.../relock-tls?tls=SIDE&tls_ca=CA: the sentinels by name at
  // their TLS ports when they speak TLS, else by address at their plain ports.
  std::string url() const;
  // The plain port of the data node the first sentinel names master now.
  std::uint16_t master_port() const;
  // host:port of a data node as the sentinels announce it (and relock's inspect() shows it):
  // localhost:TLS_PORT with TLS data nodes, else 127.0.0.1:PORT.
  std::string announced(std::uint16_t data_port) const;
  // A plain connection to a data node, by its plain port.
  raw_client client(std::uint16_t data_port) const;
  // SENTINEL FAILOVER; returns the new master's plain port once every sentinel names it and
  // it says ROLE master. Throws std::runtime_error after `timeout`.
  std::uint16_t failover(std::chrono::milliseconds timeout = std::chrono::seconds(15));

 private:
  struct sentinel_node {
    std::filesystem::path dir;
    std::uint16_t port = 0;
    std::uint16_t tls_port = 0;
    server_process process;
  };

  bool tls_data() const { return side_ != tls_side::sentinels; }
  bool tls_sentinels() const { return side_ != tls_side::data; }
  void start_sentinel(sentinel_node& node);
  std::string sentinel_config(const sentinel_node& node) const;
  // The plain port of the data node sentinel `i` names master; 0 when it names none.
  std::uint16_t named_by(std::size_t i) const;
  // Empty once every sentinel names `master` with its replica online and the others known.
  std::string problem(std::uint16_t master) const;
  std::string log_tails() const;

  const tls_files& files_;
  tls_side side_;
  // The host Sentinel knows the data nodes by: localhost when they speak TLS (and by_name).
  std::string data_host_;
  temp_dir dir_;
  std::vector<std::unique_ptr<redis_server>> data_;
  std::vector<std::unique_ptr<sentinel_node>> sentinels_;
};

}  // namespace relock::test
