// SPDX-License-Identifier: Apache-2.0
// The TLS cluster the TLS tests share in shape: 3+3 nodes with tls-cluster and tls-replication,
// certificates from `files` (naming localhost, not 127.0.0.1), and every node announcing the
// hostname localhost as its preferred endpoint, as the managed services do.
#pragma once

#include "support/redis_cluster.hpp"
#include "support/tls_files.hpp"

namespace relock::test {

inline cluster_options tls_cluster_by_hostname(const tls_files& files) {
  return cluster_options{.tls_cert_file = files.server_cert(),
                         .tls_key_file = files.server_key(),
                         .tls_ca_file = files.ca(),
                         .extra_config = {"cluster-announce-hostname localhost",
                                          "cluster-preferred-endpoint-type hostname"}};
}

}  // namespace relock::test
