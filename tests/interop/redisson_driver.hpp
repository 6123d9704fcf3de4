// SPDX-License-Identifier: Apache-2.0
// The real Redisson (Java) as a test peer: starts the driver built by
// tests/interop/redisson/prepare (a fat jar per Redisson version) as a child process and talks
// to it over its stdin/stdout protocol (see tests/interop/README.md).
//
//   relock::test::redis_server server;
//   relock::test::redisson_driver java(jar, server.url(), std::chrono::seconds(10));
//   java.call("a", "lock smoke");                       // owner "a" = one Java thread
//   auto field = java.owner_field("a");                 // "<client_id>:<thread id>"
//   auto r = java.call("b", "trylock smoke 0");         // r["result"] == false
//
// Owners are logical labels; each gets its own Java thread, so Redisson's per-thread lock
// ownership follows the label. Commands of one owner run in order; owners run concurrently, so
// send() several commands and wait_reply() them in any order to build races.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace relock::test {

// Thread-safety: send(), wait_reply(), call() and the getters may be used from several threads
// at once (one reader thread fills a reply map). Construct and destroy it on the test's thread:
// the Java child gets SIGKILL when the thread that started it exits (PR_SET_PDEATHSIG).
// Failure: the constructor throws std::runtime_error when Java cannot start, does not connect,
// or prints no ready line within `ready_timeout`; wait_reply() throws on timeout or when the
// driver has died, naming the command that got no answer.
class redisson_driver {
 public:
  // Name only what you need: options{.watchdog = std::chrono::seconds(5)}.
  struct options {
    std::chrono::milliseconds watchdog{30000};  // --watchdog-ms (Redisson's lockWatchdogTimeout)
    std::vector<std::string> cluster_nodes{};   // host:port; non-empty = useClusterServers()
    std::chrono::milliseconds ready_timeout{30000};
    std::vector<std::string> jvm_args{};  // e.g. "-Xmx256m", put before -jar
    // --sharded-subscription auto|on|off (with cluster_nodes only); empty = Redisson's default.
    // 4.x: ClusterServersConfig.setShardedSubscriptionMode; 3.18.1 accepts only "off".
    std::string sharded_subscription{};
    // host:port, one --replica each; non-empty = useMasterSlaveServers() with the (redis://)
    // url's server as master and these as slaves.
    std::vector<std::string> replicas{};
    // --sentinel-password / --sentinel-username (with a redis-sentinel:// url only): the
    // sentinels' own credentials; the url's userinfo is the data nodes'. Empty = none.
    std::string sentinel_password{};
    std::string sentinel_username{};
    // --read-mode master|slave|master_slave (with replicas or a redis-sentinel:// url only);
    // empty = master. Redisson 3.18.1 sends no WAIT after lock writes with master (it never
    // counts its slaves then); 4.x sends WAIT <slaves> 1000 in every mode.
    std::string read_mode{};
    // --tls-ca: the PEM file of the CA Redisson trusts, with a rediss:// url (single server or
    // cluster); the driver makes a PKCS12 truststore of it. Empty = the JVM's default CAs.
    std::string tls_ca_file{};
    // --nat-map (with cluster_nodes only): ClusterServersConfig.setNatMap, "HOST:PORT" read from
    // the cluster -> "HOST:PORT" Redisson connects to instead. Over TLS this maps the IPs that
    // CLUSTER NODES gives to the name the certificates carry (Redisson ignores announced
    // hostnames), so Redisson verifies that name.
    std::map<std::string, std::string> nat_map{};
    // --client-name (single server or cluster): Redisson names its connections (CLIENT SETNAME),
    // so CLIENT LIST tells them apart. Empty = unnamed, Redisson's default.
    std::string client_name{};
  };

  redisson_driver(std::string jar, std::string url, options opts);
  redisson_driver(std::string jar, std::string url,
                  std::chrono::milliseconds watchdog = std::chrono::milliseconds(30000));
  // Sends "exit", waits up to 10 s for the JVM to leave, SIGKILLs it otherwise, and reaps it.
  ~redisson_driver();
  redisson_driver(const redisson_driver&) = delete;
  redisson_driver& operator=(const redisson_driver&) = delete;

  // Queues "ID OWNER CMD_AND_ARGS" and returns ID (unique per driver). `owner` is one word;
  // `cmd_and_args` is one line. Throws std::invalid_argument on bad input and
  // std::runtime_error when the driver is gone.
  std::string send(const std::string& owner, const std::string& cmd_and_args);
  // The reply line for `id` (consumed: a second wait for the same id times out). Throws
  // std::runtime_error on timeout (with the command's text) or if the driver exited first.
  nlohmann::json wait_reply(const std::string& id, std::chrono::milliseconds timeout);
  // send() + wait_reply().
  nlohmann::json call(const std::string& owner, const std::string& cmd_and_args,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // call(), then the "result" of an ok reply; throws std::runtime_error with the Java exception
  // ("IllegalMonitorStateException: ...") when ok is false.
  nlohmann::json call_ok(const std::string& owner, const std::string& cmd_and_args,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The hash field Redisson writes for `owner`: "<client_id>:<thread id>" (asks once, cached).
  std::string owner_field(const std::string& owner);

  const std::string& client_id() const { return client_id_; }
  const std::string& redisson_version() const { return redisson_version_; }
  // In cluster mode, the sharded subscription mode the driver's Redisson runs with ("auto",
  // "on", "off"; 3.18.1 reports "off"), from its ready line; empty on a single server.
  const std::string& sharded_subscription() const { return sharded_subscription_; }
  const std::string& jar() const { return jar_; }
  // The JVM's PID (as the JVM reports it, which equals the child we forked).
  pid_t pid() const { return pid_; }
  // Sends `sig` to the JVM (SIGKILL: a crashed client whose locks must expire on their own;
  // SIGSTOP/SIGCONT: a frozen one). Does not reap; the destructor does. No-op once reaped.
  void kill(int sig = SIGKILL);
  // True until the JVM has exited (reaps it if it has).
  bool running();
  // Waits up to `timeout` for the JVM to exit; returns true (and reaps it) if it did.
  bool wait_exit(std::chrono::milliseconds timeout);
  // Lines the driver printed on stdout that were not protocol JSON (should be empty).
  std::vector<std::string> stray_output() const;

  // Every built driver jar, sorted by Redisson version (oldest first): the files
  // RELOCK_INTEROP_DIR/target/relock-redisson-driver-<version>.jar, or the ':'-separated list
  // in the environment variable RELOCK_REDISSON_JARS when set. Throws std::runtime_error (never
  // returns empty) when none exist, telling to run tests/interop/redisson/prepare: the interop
  // suite must fail, not skip, without Java or the driver.
  static std::vector<std::string> jar_paths();
  // Like jar_paths() but never throws: on error returns one entry "missing: <why>", for use in
  // INSTANTIATE_TEST_SUITE_P, whose tests then fail via check_jar() with that message.
  static std::vector<std::string> jar_params();
  // Throws std::runtime_error if `jar` is a "missing: ..." entry or not a readable file.
  static void check_jar(const std::string& jar);
  // "3.18.1" from ".../relock-redisson-driver-3.18.1.jar" ("" if the name does not match).
  static std::string version_of_jar(const std::string& jar);
  // A gtest-safe test name for a jar: "redisson_3_18_1" (or "missing").
  static std::string param_name(const std::string& jar);

 private:
  void start(const std::vector<std::string>& argv);
  void reader_loop();
  void handle_line(const std::string& line);
  void close_stdin();
  void reap_blocking();
  bool try_reap();
  std::string describe() const;
  std::string exit_description() const;

  std::string jar_;
  std::string url_;
  options opts_;

  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_status_ = 0;
  std::mutex proc_mutex_;  // guards pid_ use for kill/reap, reaped_, exit_status_

  int stdin_fd_ = -1;   // our end of the child's stdin (a socket: writes never raise SIGPIPE)
  int stdout_fd_ = -1;  // our end of the child's stdout
  int wake_fds_[2] = {-1, -1};  // self-pipe to stop the reader thread
  std::mutex write_mutex_;
  std::uint64_t next_id_ = 0;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  bool ready_ = false;
  bool eof_ = false;
  std::string startup_error_;
  std::string client_id_;
  std::string sharded_subscription_;
  std::string redisson_version_;
  std::map<std::string, nlohmann::json> replies_;
  std::map<std::string, std::string> commands_;  // id -> "owner cmd" (for error messages)
  std::map<std::string, std::string> owner_fields_;
  std::deque<std::string> stray_;

  std::thread reader_;
};

}  // namespace relock::test
