// SPDX-License-Identifier: Apache-2.0
// Where to connect and how to introduce ourselves, parsed from a redis:// or redis-cluster:// URL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <relock/config.hpp>

namespace relock::net {

struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string user;      // ACL user; empty = AUTH with the password alone
  std::string password;  // empty = no AUTH
  int db = 0;

  std::string address() const;  // host:port, [v6]:port
};

// The URL's ?pubsub= option: the same choice as config::publish.
using pubsub_mode = relock::publish_mode;

// What a URL points at: one server, the seed nodes of a Redis Cluster, or the sentinels that
// watch a master.
struct target {
  enum class mode { single, cluster, sentinel };
  mode deployment = mode::single;
  // single: the one server. cluster: the seeds as given, duplicates dropped, at least one; each
  // carries the URL's credentials and db 0 (a cluster has no other database). sentinel: the
  // sentinels as given, duplicates dropped, each with the URL's (data) credentials and db.
  std::vector<endpoint> nodes;
  std::string master_name;            // sentinel: the master the sentinels know by this name
  std::optional<pubsub_mode> pubsub;  // from ?pubsub=auto|sharded|classic|both, when given
  std::optional<replica_sync_mode> replica_sync;  // from ?replica_sync=auto|on|off
  // single: the master's replicas as ?replicas=host:port,... lists them; when given, their
  // number sizes WAIT instead of what the master's INFO says (a server that hides INFO).
  std::vector<endpoint> replicas;
  // rediss://, rediss-cluster://: TLS to every node. rediss-sentinel://: TLS to the sentinels
  // and to the data nodes, or to one side only with ?tls=sentinels or ?tls=data.
  bool tls_data = false;
  bool tls_sentinels = false;
  // ?tls_ca=FILE&tls_cert=FILE&tls_key=FILE&tls_server_name=NAME (rediss schemes only): over
  // config::tls's fields of the same names.
  std::optional<std::string> tls_ca, tls_cert, tls_key, tls_server_name;
};

// The URL with its password replaced by ***, for every message that shows a URL.
std::string redacted_url(std::string_view url);

// Parses each form, and its TLS twin (rediss://, rediss-cluster://, rediss-sentinel://):
//   redis://[user[:password]@]host[:port][/db][?OPTIONS]
//   redis-cluster://[user[:password]@]host[:port][,host[:port]...][/db][?OPTIONS]
//   redis-sentinel://[user[:password]@]host[:port][,host[:port]...]/master-name[/db][?OPTIONS]
// OPTIONS: pubsub=MODE&replica_sync=MODE&replicas=HOST:PORT,..., any of them (replicas= on a
// redis:// URL only); with TLS also tls_ca, tls_cert, tls_key, tls_server_name (percent-encoded)
// and, for a sentinel URL, tls=both|sentinels|data. Ports default to 6379 (26379 for a
// sentinel); IPv6 hosts go in brackets ([::1]:7000); percent-escapes in user and password are
// decoded; a cluster's /db needs a server with databases in cluster mode (Valkey 9). Throws
// relock::error(errc::invalid_argument) naming what is wrong, with the URL redacted.
target parse_target(std::string_view url);

// One server's endpoint: parse_target for a redis:// URL, whose ?pubsub= it checks but drops
// (call parse_target to keep it). A cluster URL is an error here.
endpoint parse_url(std::string_view url);

}  // namespace relock::net
