// SPDX-License-Identifier: Apache-2.0
#include "net/endpoint.hpp"

#include <relock/errors.hpp>

#include <algorithm>
#include <charconv>
#include <utility>

namespace relock::net {
namespace {

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  throw error(errc::invalid_argument,
              "bad Redis URL '" + redacted_url(url) + "': " + std::string(why));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) bad_url(url, "truncated %-escape");
    int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) bad_url(url, "bad %-escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

template <class T>
T parse_number(std::string_view url, std::string_view text, std::string_view what) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    bad_url(url, std::string(what) + " '" + std::string(text) + "' is not a number in range");
  }
  return value;
}

}  // namespace

std::string redacted_url(std::string_view url) {
  // A password follows the first ':' of the credentials.
  const auto scheme_end = url.find("://");
  const auto from = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  // As parse_url reads it: the credentials end at the last '@', wherever a '/' is.
  const auto authority = url.substr(from);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const auto colon = authority.find(':');
  // A lone credential is a password (as parse_url and redis-cli read it): all of it goes.
  const auto secret = (colon == std::string_view::npos || colon > at) ? 0 : colon + 1;
  return std::string(url.substr(0, from + secret)) + "***" + std::string(url.substr(from + at));
}

std::string endpoint::address() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

namespace {

// host[:port] or [v6][:port] into `ep`; the port defaults to 6379.
void parse_host_port(std::string_view url, std::string_view text, endpoint& ep,
                     std::uint16_t default_port = 6379) {
  std::string_view port;
  bool port_given = false;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) bad_url(url, "unclosed [ in IPv6 host");
    ep.host = std::string(text.substr(1, close - 1));
    std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad_url(url, "junk after IPv6 host");
      port = after.substr(1);
      port_given = true;
    }
  } else if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    ep.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    port_given = true;
  } else {
    ep.host = std::string(text);
  }
  if (ep.host.empty()) bad_url(url, "no host");
  // "host:" is a typo, not a request for the default port.
  if (port_given && port.empty()) bad_url(url, "empty port after ':'");
  ep.port = default_port;
  if (!port.empty()) {
    ep.port = parse_number<std::uint16_t>(url, port, "port");
    if (ep.port == 0) bad_url(url, "port 0");
  }
}

// "pubsub=MODE&replica_sync=MODE&replicas=HOST:PORT,...", any of them, into `t`; an unknown
// option is a typo worth an error.
void parse_options(std::string_view url, std::string_view query, target& t) {
  while (true) {
    const auto amp = query.find('&');
    const auto option = query.substr(0, amp);
    const auto eq = option.find('=');
    const auto name = option.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view{} : option.substr(eq + 1);
    if (name == "pubsub") {
      if (t.pubsub) bad_url(url, "pubsub given twice");
      if (value == "auto") {
        t.pubsub = pubsub_mode::auto_detect;
      } else if (value == "sharded") {
        t.pubsub = pubsub_mode::sharded;
      } else if (value == "classic") {
        t.pubsub = pubsub_mode::classic;
      } else if (value == "both") {
        t.pubsub = pubsub_mode::both;
      } else {
        bad_url(url,
                "pubsub must be auto, sharded, classic or both, not '" + std::string(value) + "'");
      }
    } else if (name == "replica_sync") {
      if (t.replica_sync) bad_url(url, "replica_sync given twice");
      if (value == "auto") {
        t.replica_sync = replica_sync_mode::auto_detect;
      } else if (value == "on") {
        t.replica_sync = replica_sync_mode::on;
      } else if (value == "off") {
        t.replica_sync = replica_sync_mode::off;
      } else {
        bad_url(url, "replica_sync must be auto, on or off, not '" + std::string(value) + "'");
      }
    } else if (name == "replicas") {
      if (!t.replicas.empty()) bad_url(url, "replicas given twice");
      for (std::string_view rest = value;;) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        if (item.empty()) bad_url(url, "empty host in replicas=");
        endpoint replica;
        parse_host_port(url, item, replica);
        t.replicas.push_back(std::move(replica));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    } else if (name == "tls_ca" || name == "tls_cert" || name == "tls_key" ||
               name == "tls_server_name") {
      auto& field = name == "tls_ca"     ? t.tls_ca
                    : name == "tls_cert" ? t.tls_cert
                    : name == "tls_key"  ? t.tls_key
                                         : t.tls_server_name;
      if (field) bad_url(url, std::string(name) + " given twice");
      if (value.empty()) bad_url(url, "empty " + std::string(name) + "=");
      field = percent_decode(url, value);
    } else if (name == "tls") {
      // Which side of a Sentinel deployment speaks TLS (the scheme says both).
      if (value == "both") {
        t.tls_data = t.tls_sentinels = true;
      } else if (value == "sentinels") {
        t.tls_sentinels = true;
        t.tls_data = false;
      } else if (value == "data") {
        t.tls_data = true;
        t.tls_sentinels = false;
      } else {
        bad_url(url, "tls must be both, sentinels or data, not '" + std::string(value) + "'");
      }
    } else {
      bad_url(url, "unknown option '" + std::string(name) +
                       "' (known: pubsub, replica_sync, replicas, tls_ca, tls_cert, tls_key, "
                       "tls_server_name, tls)");
    }
    if (amp == std::string_view::npos) return;
    query = query.substr(amp + 1);
  }
}

}  // namespace

target parse_target(std::string_view url) {
  target t;
  std::string_view rest = url;
  // "redis" or "rediss", then the deployment.
  bool tls = false;
  if (rest.starts_with("rediss")) {
    tls = true;
    rest.remove_prefix(6);
  } else if (rest.starts_with("redis")) {
    rest.remove_prefix(5);
  } else {
    rest = {};
  }
  if (rest.starts_with("://")) {
    rest.remove_prefix(3);
  } else if (rest.starts_with("-cluster://")) {
    rest.remove_prefix(11);
    t.deployment = target::mode::cluster;
  } else if (rest.starts_with("-sentinel://")) {
    rest.remove_prefix(12);
    t.deployment = target::mode::sentinel;
  } else {
    bad_url(url,
            "it must start with redis://, redis-cluster:// or redis-sentinel:// (rediss://, "
            "rediss-cluster://, rediss-sentinel:// with TLS)");
  }
  t.tls_data = t.tls_sentinels = tls;
  const bool cluster = t.deployment == target::mode::cluster;
  const bool sentinel = t.deployment == target::mode::sentinel;

  // Credentials end at the last '@' (a password may hold '/', '?' or '@'; the rest never does),
  // so the path and the options are looked for only after them.
  endpoint ep;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = credentials.find(':'); colon != std::string_view::npos) {
      ep.user = percent_decode(url, credentials.substr(0, colon));
      ep.password = percent_decode(url, credentials.substr(colon + 1));
    } else {
      // redis://secret@host: a lone credential is the password, as redis-cli reads it.
      ep.password = percent_decode(url, credentials);
    }
  }
  if (auto question = rest.find('?'); question != std::string_view::npos) {
    parse_options(url, rest.substr(question + 1), t);
    rest = rest.substr(0, question);
    if (!t.replicas.empty() && (cluster || sentinel)) {
      bad_url(url, "replicas= is for a redis:// URL to a master: Sentinel and Cluster name theirs");
    }
    const bool tls_option = t.tls_ca || t.tls_cert || t.tls_key || t.tls_server_name ||
                            t.tls_data != tls || t.tls_sentinels != tls;
    if (tls_option && !tls) bad_url(url, "TLS options need a rediss scheme (rediss://...)");
    if (t.tls_data != t.tls_sentinels && !sentinel) {
      bad_url(url, "tls= names a side of a Sentinel deployment: rediss-sentinel:// only");
    }
    if (t.tls_cert.has_value() != t.tls_key.has_value()) {
      bad_url(url, "tls_cert and tls_key go together");
    }
  }
  if (sentinel) {
    // host:port,.../master-name[/db]
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash + 1 == rest.size() || rest[slash + 1] == '/') {
      bad_url(url, "no master name: redis-sentinel://host:port[,host:port...]/master-name");
    }
    std::string_view path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    const auto db_slash = path.find('/');
    t.master_name = percent_decode(url, path.substr(0, db_slash));
    if (db_slash != std::string_view::npos) {
      std::string_view db = path.substr(db_slash + 1);
      if (!db.empty()) ep.db = parse_number<int>(url, db, "database");
      if (ep.db < 0) bad_url(url, "negative database");
    }
  } else if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    // A cluster's too: Valkey 9 has numbered databases in cluster mode (cluster-databases);
    // Redis Cluster refuses SELECT, which the first connection reports.
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) ep.db = parse_number<int>(url, db, "database");
    if (ep.db < 0) bad_url(url, "negative database");
    rest = rest.substr(0, slash);
  }

  if (!cluster && !sentinel) {
    if (rest.find(',') != std::string_view::npos) {
      bad_url(url, "several hosts: a cluster URL starts with redis-cluster://");
    }
    parse_host_port(url, rest, ep);
    t.nodes.push_back(std::move(ep));
    return t;
  }
  while (true) {
    const auto comma = rest.find(',');
    const auto item = rest.substr(0, comma);
    if (item.empty()) bad_url(url, "empty host in the node list");
    parse_host_port(url, item, ep, sentinel ? 26379 : 6379);
    const bool seen = std::any_of(t.nodes.begin(), t.nodes.end(), [&](const endpoint& n) {
      return n.host == ep.host && n.port == ep.port;
    });
    if (!seen) t.nodes.push_back(ep);
    if (comma == std::string_view::npos) return t;
    rest = rest.substr(comma + 1);
  }
}

endpoint parse_url(std::string_view url) {
  auto t = parse_target(url);
  if (t.deployment != target::mode::single) {
    bad_url(url, "a redis-cluster:// or redis-sentinel:// URL where one server is expected");
  }
  return std::move(t.nodes.front());
}

}  // namespace relock::net
