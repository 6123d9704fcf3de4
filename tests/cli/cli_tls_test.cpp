// SPDX-License-Identifier: Apache-2.0
// relock over TLS: run with a rediss:// URL and --tls-ca or $RELOCK_TLS_CA, the server's name
// for an address its certificate does not carry, mutual TLS, a refused certificate, the flag
// that turns verification off, and bad TLS input.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cli_fixture.hpp"
#include "support/tls_files.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

const tls_files& certificates() {
  static const tls_files files;
  return files;
}

// A redis-server with a plain port (for the test's raw client) and a TLS port (for relock).
class cli_tls : public ::testing::Test {
 protected:
  explicit cli_tls(bool auth_clients = false)
      : server_({.tls_cert_file = certificates().server_cert(),
                 .tls_key_file = certificates().server_key(),
                 .tls_ca_file = certificates().ca(),
                 .tls_auth_clients = auth_clients}) {}

  // `relock --url rediss://HOST:TLS_PORT ARGS... run NAME -- sh -c 'test -n "$RELOCK_NAME"'`,
  // which succeeds only once relock holds NAME.
  cli_result run_over_tls(const std::string& host, std::vector<std::string> args,
                          cli_options options = {}, const std::string& name = "tls-run") {
    std::vector<std::string> all{"--url", server_.tls_url(host)};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"run", name, "--", "sh", "-c", "test \"$RELOCK_NAME\" = " + name});
    return run_cli(all, 30s, std::move(options));
  }

  redis_server server_;
};

class cli_mutual_tls : public cli_tls {
 protected:
  cli_mutual_tls() : cli_tls(/*auth_clients=*/true) {}
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_F(cli_tls, run_over_rediss_trusts_the_ca_of_tls_ca) {
  auto r = run_over_tls("localhost", {"--tls-ca", certificates().ca()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(cli_tls, run_over_rediss_trusts_the_ca_of_relock_tls_ca) {
  auto r = run_over_tls("localhost", {},
                        cli_options::with_env({{"RELOCK_TLS_CA", certificates().ca()}}));
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(cli_tls, a_flag_wins_over_its_environment_twin) {
  auto r = run_over_tls("localhost", {"--tls-ca", certificates().ca()},
                        cli_options::with_env({{"RELOCK_TLS_CA", certificates().stranger_ca()}}));
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(cli_tls, the_server_name_lets_relock_connect_by_an_address_the_certificate_lacks) {
  auto by_address = run_over_tls("127.0.0.1", {"--tls-ca", certificates().ca()});
  EXPECT_EQ(by_address.code, 2);
  EXPECT_NE(by_address.err.find("does not name '127.0.0.1'"), std::string::npos) << by_address.err;
  EXPECT_NE(by_address.err.find("--tls-server-name"), std::string::npos) << by_address.err;

  auto named = run_over_tls("127.0.0.1",
                            {"--tls-ca", certificates().ca(), "--tls-server-name", "redis.test"});
  EXPECT_EQ(named.code, 0) << named.err;
  auto from_env = run_over_tls("127.0.0.1", {"--tls-ca", certificates().ca()},
                               cli_options::with_env({{"RELOCK_TLS_SERVER_NAME", "redis.test"}}));
  EXPECT_EQ(from_env.code, 0) << from_env.err;
}

TEST_F(cli_tls, a_certificate_another_ca_signed_is_refused_at_once_with_exit_2) {
  const auto asked = std::chrono::steady_clock::now();
  auto r = run_over_tls("localhost", {"--tls-ca", certificates().stranger_ca()});
  const auto took = std::chrono::steady_clock::now() - asked;
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("certificate was refused"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--tls-ca"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unreachable"), std::string::npos) << "it answered: " << r.err;
  EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
  EXPECT_LT(took, 5s) << "the connect timeout is 10 s: a refusal must not wait for it";
  EXPECT_EQ(raw_client::to(server_).command({"EXISTS", "tls-run"}).integer, 0);
}

TEST_F(cli_tls, turning_verification_off_takes_its_own_flag_and_warns_once) {
  auto r = run_over_tls("localhost",
                        {"--tls-ca", certificates().stranger_ca(), "--tls-insecure-skip-verify"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "without verification"), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("relock: warning: ", 0), 0u) << r.err;
}

TEST_F(cli_mutual_tls, a_server_that_asks_for_a_client_certificate_gets_the_one_given) {
  auto without = run_over_tls("localhost", {"--tls-ca", certificates().ca()});
  EXPECT_EQ(without.code, 2);
  EXPECT_EQ(count_of(without.err, "\n"), 1u) << without.err;
  EXPECT_NE(without.err.find("--tls-cert"), std::string::npos) << without.err;

  auto with = run_over_tls(
      "localhost", {"--tls-ca", certificates().ca(), "--tls-cert", certificates().client_cert(),
                    "--tls-key", certificates().client_key()});
  EXPECT_EQ(with.code, 0) << with.err;
  auto from_env =
      run_over_tls("localhost", {},
                   cli_options::with_env({{"RELOCK_TLS_CA", certificates().ca()},
                                          {"RELOCK_TLS_CERT", certificates().client_cert()},
                                          {"RELOCK_TLS_KEY", certificates().client_key()}}));
  EXPECT_EQ(from_env.code, 0) << from_env.err;
}

TEST_F(cli_tls, bad_tls_input_is_exit_2_and_one_line_naming_the_flag) {
  const auto& t = certificates();
  struct bad {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string says;
  };
  const std::vector<bad> cases{
      {{"--tls-ca", "/nonexistent/ca.pem"}, {}, "--tls-ca '/nonexistent/ca.pem': cannot read it"},
      {{}, {{"RELOCK_TLS_CA", "/nonexistent/ca.pem"}}, "$RELOCK_TLS_CA '/nonexistent/ca.pem'"},
      {{"--tls-ca", t.ca(), "--tls-cert", t.client_cert()}, {}, "needs its key (--tls-key"},
      {{"--tls-ca", t.ca(), "--tls-key", t.client_key()}, {}, "needs its certificate"},
      {{"--tls-ca", t.ca()}, {{"RELOCK_TLS_KEY", t.client_key()}}, "$RELOCK_TLS_KEY"},
      {{"--tls-ca", t.ca(), "--tls-cert", t.client_cert(), "--tls-key", t.server_key()},
       {},
       "is not the key of the certificate"},
      {{"--tls-ca", "/"}, {}, "--tls-ca '/': a directory"},
      {{"--tls-ca", ""}, {}, "--tls-ca is empty"},
      {{"--tls-server-name", ""}, {}, "--tls-server-name is empty"},
  };
  for (const auto& c : cases) {
    auto r = run_over_tls("localhost", c.args, cli_options::with_env(c.env));
    EXPECT_EQ(r.code, 2) << c.says;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.says << ": " << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
  }
  EXPECT_EQ(raw_client::to(server_).command({"EXISTS", "tls-run"}).integer, 0);
}

TEST_F(cli_tls, tls_flags_with_a_plain_url_are_refused_and_their_twins_ignored) {
  auto flag = run_cli({"--url", server_.url(), "--tls-ca", certificates().ca(), "status", "x"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_NE(flag.err.find("rediss://"), std::string::npos) << flag.err;
  auto twin = run_cli({"--url", server_.url(), "status", "x"}, 30s,
                      cli_options::with_env({{"RELOCK_TLS_CA", "/nonexistent/ca.pem"}}));
  EXPECT_EQ(twin.code, 0) << twin.err;
}
