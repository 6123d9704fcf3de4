// SPDX-License-Identifier: Apache-2.0
package dev.relock.interop;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.relock.json.Json;

import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RBucket;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.MasterSlaveServersConfig;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;
import org.redisson.config.SingleServerConfig;

/**
 * Acts as a Redisson client on request, for the relock interop suite.
 *
 * <pre>
 *   java -jar relock-redisson-driver-VERSION.jar --url redis://127.0.0.1:PORT
 *        [--watchdog-ms N] [--cluster host:port,host:port... [--sharded-subscription auto|on|off]]
 *        [--replica host:port... [--read-mode master|slave|master_slave]]
 *        [--tls-ca CA.pem]   (with a rediss:// URL)
 *        [--nat-map HOST:PORT=HOST:PORT,...]   (with --cluster)
 *        [--client-name NAME]   (single server or --cluster)
 *   java -jar relock-redisson-driver-VERSION.jar
 *        --url redis-sentinel://[user:pass@]host:port[,host:port...]/MASTER[/db]
 *        [--sentinel-username U] [--sentinel-password PW] [--watchdog-ms N]
 *        [--read-mode master|slave|master_slave]
 * </pre>
 *
 * A redis:// URL alone is useSingleServer(); with --replica (repeatable) it is
 * useMasterSlaveServers() with the URL's server as master and those as slaves; --cluster is
 * useClusterServers(); a redis-sentinel:// URL (relock's form: the sentinels, then the master's
 * name; the credentials are the data nodes', the sentinels' own come from --sentinel-*) is
 * useSentinelServers(). Every form with replicas reads from the master (ReadMode.MASTER), unless
 * --read-mode says otherwise (sentinel and --replica forms only). Mind that Redisson 3.18.1 with
 * ReadMode.MASTER never initialises its slaves, counts none, and so sends no WAIT after lock
 * writes; with its default (slave) it sends WAIT n 1000. 4.x sends WAIT n 1000 in every read
 * mode.
 *
 * With a rediss:// URL (single server or cluster) Redisson speaks TLS; --tls-ca names the PEM
 * file of the CA it trusts (the test's throwaway CA), else it trusts the JVM's default CAs.
 * Redisson verifies the server's certificate and its name (the URL's host) either way.
 *
 * --nat-map is ClusterServersConfig.setNatMap (both versions): every node address Redisson reads
 * from the cluster (CLUSTER NODES: always an IP) is replaced by the one given, before it
 * connects. Over TLS that is how Redisson reaches nodes by the name their certificate carries
 * (3.18.1 and 4.7.0 both ignore the hostname a node announces), and so keeps verifying it.
 * --client-name is setClientName: Redisson names each of its connections (CLIENT SETNAME), so a
 * test can tell them apart in CLIENT LIST.
 *
 * Prints {"event":"ready",...} once connected, then reads commands "ID OWNER CMD ARGS..." from
 * stdin, one per line, and answers each with exactly one JSON line on stdout. Every OWNER has its
 * own thread, so Redisson's lock ownership (by thread id) follows the logical owner. See
 * tests/interop/README.md for the protocol.
 *
 * Besides locks it drives RBlockingQueue and RDelayedQueue (the q* and d* commands, see "Queues"
 * below), always with StringCodec, so a value is the same bytes relock reads and writes, and
 * RSemaphore, RPermitExpirableSemaphore and RCountDownLatch (the s*, p* and l* commands, in
 * Synchronizers.java).
 *
 * The source compiles against Redisson 3.18.1 and 4.x alike; the APIs that exist in 4.x only (the
 * fenced lock; RPermitExpirableSemaphore's acquiredPermits, getLeaseTime and setPermits) are
 * reached by reflection.
 */
public final class Driver {

  /** Thrown for malformed commands: reported as ok:false, never fatal. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  /** Thrown when this Redisson version lacks the requested object kind. */
  static final class UnsupportedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnsupportedException(String message) {
      super(message);
    }
  }

  @FunctionalInterface
  interface Handler {
    Object run(String[] args) throws Exception;
  }

  /**
   * A handler's result that is not ready yet: the reply is written when `stage` completes (its
   * value, or its exception), with end_ns taken then, while the owner's thread goes on with its
   * next command at once. For Redisson's async calls (awaitAsync...), so one owner can have
   * several of them waiting.
   */
  record Deferred(java.util.concurrent.CompletionStage<?> stage) {}

  private static final String USAGE =
      "usage: java -jar relock-redisson-driver.jar --url redis://127.0.0.1:PORT"
          + " [--watchdog-ms N] [--cluster host:port,host:port..."
          + " [--sharded-subscription auto|on|off]]"
          + " [--replica host:port... [--read-mode master|slave|master_slave]]"
          + " [--tls-ca CA.pem] [--nat-map HOST:PORT=HOST:PORT,...] [--client-name NAME]\n"
          + "       java -jar relock-redisson-driver.jar"
          + " --url redis-sentinel://[user:pass@]host:port[,host:port...]/MASTER[/db]"
          + " [--sentinel-username U] [--sentinel-password PW] [--watchdog-ms N]"
          + " [--read-mode master|slave|master_slave]";

  private static final String SENTINEL_SCHEME = "redis-sentinel://";

  // The lock token of a RedissonMultiLock: multi:MEMBER,MEMBER,...
  private static final String MULTI_PREFIX = "multi:";

  // Redisson 3.18.1 has no sharded pub/sub setting and always uses SUBSCRIBE/PUBLISH in a
  // cluster; 4.x has ClusterServersConfig.setShardedSubscriptionMode (AUTO by default).
  private static final String SHARDED_MODE_CLASS = "org.redisson.config.ShardedSubscriptionMode";

  // The real stdout, kept for protocol lines only; System.out is pointed at stderr so nothing
  // else (a library's banner, a stray println) can ever interleave with the protocol.
  private final PrintStream protocol;
  private final RedissonClient redisson;
  private final String redissonVersion;
  private final Map<String, ExecutorService> owners = new ConcurrentHashMap<>();
  private final Map<String, Handler> handlers = new LinkedHashMap<>();
  // One RDelayedQueue per destination queue name, made on first use and kept (its transfer task
  // runs in this Redisson until ddestroy or exit).
  private final Map<String, RDelayedQueue<String>> delayedQueues = new ConcurrentHashMap<>();
  private volatile boolean exiting = false;

  private Driver(PrintStream protocol, RedissonClient redisson, String redissonVersion) {
    this.protocol = protocol;
    this.redisson = redisson;
    this.redissonVersion = redissonVersion;
    registerHandlers();
  }

  // ------------------------------------------------------------------------------------------
  // Start-up

  public static void main(String[] argv) {
    PrintStream protocol =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);

    String url = null;
    String cluster = null;
    String sharded = null;
    long watchdogMs = -1;
    List<String> replicas = new ArrayList<>();
    String sentinelUsername = null;
    String sentinelPassword = null;
    ReadMode readMode = null;
    String tlsCa = null;
    Map<String, String> natMap = new LinkedHashMap<>();
    String clientName = null;
    try {
      for (int i = 0; i < argv.length; i++) {
        String a = argv[i];
        switch (a) {
          case "--url" -> url = value(argv, ++i, a);
          case "--cluster" -> cluster = value(argv, ++i, a);
          case "--replica" -> replicas.add(value(argv, ++i, a));
          case "--tls-ca" -> tlsCa = value(argv, ++i, a);
          case "--nat-map" -> {
            for (String pair : value(argv, ++i, a).split(",")) {
              String[] fromTo = pair.split("=", -1);
              if (fromTo.length != 2 || fromTo[0].isEmpty() || fromTo[1].isEmpty()) {
                throw new UsageException("--nat-map takes HOST:PORT=HOST:PORT,...: " + pair);
              }
              natMap.put(fromTo[0], fromTo[1]);
            }
          }
          case "--client-name" -> clientName = value(argv, ++i, a);
          case "--sentinel-username" -> sentinelUsername = value(argv, ++i, a);
          case "--sentinel-password" -> sentinelPassword = value(argv, ++i, a);
          case "--read-mode" -> {
            String mode = value(argv, ++i, a).toUpperCase(java.util.Locale.ROOT);
            if (!mode.equals("MASTER") && !mode.equals("SLAVE") && !mode.equals("MASTER_SLAVE")) {
              throw new UsageException("--read-mode must be master, slave or master_slave");
            }
            readMode = ReadMode.valueOf(mode);
          }
          case "--sharded-subscription" -> {
            sharded = value(argv, ++i, a).toLowerCase(java.util.Locale.ROOT);
            if (!sharded.equals("auto") && !sharded.equals("on") && !sharded.equals("off")) {
              throw new UsageException("--sharded-subscription must be auto, on or off");
            }
          }
          case "--watchdog-ms" -> {
            watchdogMs = Long.parseLong(value(argv, ++i, a));
            if (watchdogMs <= 0) {
              throw new UsageException("--watchdog-ms must be > 0");
            }
          }
          case "--help", "-h" -> {
            System.err.println(USAGE);
            System.exit(0);
          }
          default -> throw new UsageException("unknown argument " + a);
        }
      }
      if (url == null && cluster == null) {
        throw new UsageException("--url or --cluster is required");
      }
      if (sharded != null && cluster == null) {
        throw new UsageException("--sharded-subscription needs --cluster");
      }
      boolean sentinel = url != null && url.startsWith(SENTINEL_SCHEME);
      if (sentinel && cluster != null) {
        throw new UsageException("--cluster does not go with a redis-sentinel:// URL");
      }
      if (!replicas.isEmpty() && (cluster != null || url == null || sentinel)) {
        throw new UsageException("--replica needs a redis:// URL (the master) and no --cluster");
      }
      if ((sentinelUsername != null || sentinelPassword != null) && !sentinel) {
        throw new UsageException("--sentinel-username/--sentinel-password need a"
            + " redis-sentinel:// URL");
      }
      if (readMode != null && !sentinel && replicas.isEmpty()) {
        throw new UsageException("--read-mode needs --replica or a redis-sentinel:// URL");
      }
      if (tlsCa != null && (sentinel || !replicas.isEmpty())) {
        throw new UsageException("--tls-ca goes with a single server or --cluster only");
      }
      if (!natMap.isEmpty() && cluster == null) {
        throw new UsageException("--nat-map needs --cluster");
      }
      if (clientName != null && (sentinel || !replicas.isEmpty())) {
        throw new UsageException("--client-name goes with a single server or --cluster only");
      }
    } catch (RuntimeException e) {
      System.err.println("relock-redisson-driver: " + e.getMessage());
      System.err.println(USAGE);
      fatal(protocol, "bad command line: " + describe(e), 2);
      return;
    }

    String version = redissonVersion();
    Config config;
    try {
      if (url != null && url.startsWith(SENTINEL_SCHEME)) {
        config = buildSentinelConfig(url, sentinelUsername, sentinelPassword, watchdogMs,
            readMode == null ? ReadMode.MASTER : readMode);
      } else if (!replicas.isEmpty()) {
        config = buildMasterSlaveConfig(url, replicas, watchdogMs,
            readMode == null ? ReadMode.MASTER : readMode);
      } else {
        config = buildConfig(url, cluster, watchdogMs, sharded, version);
      }
      if (tlsCa != null) {
        URL truststore = truststoreOf(tlsCa);
        if (cluster != null) {
          trust(config.useClusterServers(), truststore);
        } else {
          trust(config.useSingleServer(), truststore);
        }
      }
      if (!natMap.isEmpty()) {
        config.useClusterServers().setNatMap(natMap);
      }
      if (clientName != null) {
        if (cluster != null) {
          config.useClusterServers().setClientName(clientName);
        } else {
          config.useSingleServer().setClientName(clientName);
        }
      }
    } catch (Exception e) {
      fatal(protocol, "bad command line: " + describe(e), 2);
      return;
    }
    RedissonClient client;
    try {
      client = Redisson.create(config);
    } catch (Throwable e) {
      fatal(protocol, "cannot connect: " + describe(e), 3);
      return;
    }

    Driver driver = new Driver(protocol, client, version);
    Map<String, Object> ready = new LinkedHashMap<>();
    ready.put("event", "ready");
    ready.put("redisson_version", version);
    ready.put("client_id", client.getId());
    ready.put("pid", ProcessHandle.current().pid());
    ready.put("watchdog_ms", client.getConfig().getLockWatchdogTimeout());
    if (cluster != null) {
      ready.put("sharded_subscription", shardedSubscription(config.useClusterServers()));
    } else if (config.isSentinelConfig()) {
      ready.put("servers", "sentinel");
      ready.put("read_mode", config.useSentinelServers().getReadMode().toString()
          .toLowerCase(java.util.Locale.ROOT));
    } else if (!replicas.isEmpty()) {
      ready.put("servers", "master_slave");
      ready.put("read_mode", config.useMasterSlaveServers().getReadMode().toString()
          .toLowerCase(java.util.Locale.ROOT));
    }
    driver.emit(ready);
    driver.serve(System.in);
  }

  private static String value(String[] argv, int i, String flag) {
    if (i >= argv.length) {
      throw new UsageException(flag + " needs a value");
    }
    return argv[i];
  }

  private static void fatal(PrintStream protocol, String message, int code) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("event", "error");
    line.put("error", message);
    synchronized (protocol) {
      protocol.print(Json.write(line));
      protocol.print('\n');
      protocol.flush();
    }
    System.exit(code);
  }

  /** The version recorded in the Redisson jar itself (its Maven pom.properties). */
  static String redissonVersion() {
    try (InputStream in =
        Redisson.class.getResourceAsStream("/META-INF/maven/org.redisson/redisson/pom.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank()) {
          return v.trim();
        }
      }
    } catch (IOException ignored) {
      // fall through
    }
    Package pkg = Redisson.class.getPackage();
    if (pkg != null && pkg.getImplementationVersion() != null) {
      return pkg.getImplementationVersion();
    }
    return "unknown";
  }

  static Config buildConfig(String url, String cluster, long watchdogMs, String sharded,
      String version) {
    Config config = new Config();
    if (watchdogMs > 0) {
      config.setLockWatchdogTimeout(watchdogMs);
    }
    String username = null;
    String password = null;
    String address = null;
    if (url != null) {
      Server server = Server.parse(url);
      username = server.username();
      password = server.password();
      address = server.address();
    }
    if (cluster != null) {
      ClusterServersConfig cc = config.useClusterServers();
      for (String node : cluster.split(",")) {
        String n = node.trim();
        if (n.isEmpty()) {
          continue;
        }
        cc.addNodeAddress(n.contains("://") ? n : "redis://" + n);
      }
      if (address != null) {
        cc.addNodeAddress(address);
      }
      cc.setMasterConnectionMinimumIdleSize(2);
      cc.setSlaveConnectionMinimumIdleSize(1);
      cc.setSubscriptionConnectionMinimumIdleSize(1);
      // Reads from masters: Redisson's default (SLAVE) reads replicas, which replicate
      // asynchronously, so incloop's GET could miss the SET just before it and tests that read
      // a hold right after taking it could see nothing.
      cc.setReadMode(ReadMode.MASTER);
      if (sharded != null) {
        setShardedSubscription(cc, sharded, version);
      }
      if (username != null) {
        cc.setUsername(username);
      }
      if (password != null) {
        cc.setPassword(password);
      }
    } else {
      SingleServerConfig sc = config.useSingleServer();
      sc.setAddress(address);
      // Few idle connections: quicker start, and a readable MONITOR.
      sc.setConnectionMinimumIdleSize(2);
      sc.setSubscriptionConnectionMinimumIdleSize(1);
      if (username != null) {
        sc.setUsername(username);
      }
      if (password != null) {
        sc.setPassword(password);
      }
    }
    return config;
  }

  // The truststore's password: the PKCS12 format asks for one; the store holds only public
  // certificates, so it protects nothing.
  private static final String TRUSTSTORE_PASSWORD = "relock-interop";

  /**
   * The certificates of a PEM file as a PKCS12 truststore in a temp file (deleted on exit), for
   * setSslTruststore(URL), which 3.18.1 and 4.x both take. Built here with CertificateFactory and
   * KeyStore rather than by keytool, so a test passes the same PEM file relock reads and runs no
   * extra tool.
   */
  static URL truststoreOf(String pemFile) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    int n = 0;
    try (InputStream in = Files.newInputStream(Path.of(pemFile))) {
      for (Certificate c : x509.generateCertificates(in)) {
        store.setCertificateEntry("ca-" + n++, c);
      }
    }
    if (n == 0) {
      throw new UsageException("--tls-ca " + pemFile + ": no certificate in it");
    }
    Path file = Files.createTempFile("relock-interop-truststore-", ".p12");
    file.toFile().deleteOnExit();
    try (OutputStream out = Files.newOutputStream(file)) {
      store.store(out, TRUSTSTORE_PASSWORD.toCharArray());
    }
    return file.toUri().toURL();
  }

  private static void trust(org.redisson.config.BaseConfig<?> servers, URL truststore) {
    servers.setSslTruststore(truststore);
    servers.setSslTruststorePassword(TRUSTSTORE_PASSWORD);
  }

  /**
   * One server's redis://[user:pass@]host:port URL: its Redisson address ("redis://host:port")
   * and the credentials (null when absent; a lone userinfo is the password).
   */
  record Server(String address, String username, String password) {
    static Server parse(String url) {
      URI uri = URI.create(url);
      String scheme = uri.getScheme() == null ? "redis" : uri.getScheme();
      if (!scheme.equals("redis") && !scheme.equals("rediss")) {
        throw new UsageException("unsupported URL scheme " + scheme);
      }
      if (uri.getHost() == null || uri.getPort() <= 0) {
        throw new UsageException("URL needs host and port: " + url);
      }
      String[] credentials = credentials(uri.getRawUserInfo());
      return new Server(scheme + "://" + uri.getHost() + ":" + uri.getPort(), credentials[0],
          credentials[1]);
    }
  }

  /** URL-encoded user:pass (either may be empty; no colon: the password) as {user, pass}. */
  private static String[] credentials(String userInfo) {
    String[] out = new String[2];
    if (userInfo != null && !userInfo.isEmpty()) {
      int colon = userInfo.indexOf(':');
      String user = colon >= 0 ? userInfo.substring(0, colon) : "";
      String pass = colon >= 0 ? userInfo.substring(colon + 1) : userInfo;
      out[0] = user.isEmpty() ? null : URLDecoder.decode(user, StandardCharsets.UTF_8);
      out[1] = pass.isEmpty() ? null : URLDecoder.decode(pass, StandardCharsets.UTF_8);
    }
    return out;
  }

  /** A host:port (or redis://host:port) as a Redisson address; `defaultPort` when absent. */
  private static String nodeAddress(String node, int defaultPort) {
    String n = node.trim();
    if (n.isEmpty()) {
      throw new UsageException("empty host:port");
    }
    if (n.contains("://")) {
      return n;
    }
    // host, host:port, [v6]:port
    boolean hasPort = n.startsWith("[") ? n.contains("]:") : n.indexOf(':') >= 0;
    return "redis://" + (hasPort ? n : n + ":" + defaultPort);
  }

  /**
   * useMasterSlaveServers(): the redis:// URL's server as master, `replicas` (host:port) as
   * slaves. Reads from the master by default (readMode), as in a cluster: Redisson's default
   * (SLAVE) reads replicas, which replicate asynchronously. Everything else Redisson's default
   * (its lock writes are followed by WAIT: 4.x always, 3.18.1 only when readMode is not MASTER,
   * see the class comment).
   */
  static Config buildMasterSlaveConfig(String url, List<String> replicas, long watchdogMs,
      ReadMode readMode) {
    Config config = new Config();
    if (watchdogMs > 0) {
      config.setLockWatchdogTimeout(watchdogMs);
    }
    Server master = Server.parse(url);
    MasterSlaveServersConfig ms = config.useMasterSlaveServers();
    ms.setMasterAddress(master.address());
    for (String replica : replicas) {
      ms.addSlaveAddress(nodeAddress(replica, 6379));
    }
    ms.setReadMode(readMode);
    // Few idle connections: quicker start, and a readable MONITOR.
    ms.setMasterConnectionMinimumIdleSize(2);
    ms.setSlaveConnectionMinimumIdleSize(1);
    ms.setSubscriptionConnectionMinimumIdleSize(1);
    if (master.username() != null) {
      ms.setUsername(master.username());
    }
    if (master.password() != null) {
      ms.setPassword(master.password());
    }
    return config;
  }

  /**
   * useSentinelServers() from relock's URL
   * redis-sentinel://[user:pass@]host:port[,host:port...]/MASTER[/db][?relock's options]: the
   * sentinels (port 26379 when absent), the master's name, the data nodes' credentials from the
   * userinfo (a lone one is the password, as relock reads it) and the database; relock's own
   * options (?replica_sync=...) mean nothing to Redisson and are ignored. The sentinels' own
   * credentials come from --sentinel-username / --sentinel-password (both Redisson versions
   * have setSentinelUsername/setSentinelPassword). Reads from the master by default (see
   * buildMasterSlaveConfig). checkSentinelsList off: with it on (the default), Redisson refuses
   * to start unless SENTINEL SENTINELS lists at least one other sentinel, so a lone sentinel, or
   * a fresh set whose sentinels have not yet heard each other's hello messages (up to ~2 s after
   * they start), fails with "At least two sentinels should be defined in Redis configuration".
   */
  static Config buildSentinelConfig(String url, String sentinelUsername, String sentinelPassword,
      long watchdogMs, ReadMode readMode) {
    String rest = url.substring(SENTINEL_SCHEME.length());
    String userInfo = null;
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      userInfo = rest.substring(0, at);
      rest = rest.substring(at + 1);
    }
    int question = rest.indexOf('?');
    if (question >= 0) {
      rest = rest.substring(0, question);
    }
    int slash = rest.indexOf('/');
    if (slash < 0 || slash + 1 == rest.length() || rest.charAt(slash + 1) == '/') {
      throw new UsageException(
          "no master name: redis-sentinel://host:port[,host:port...]/master-name: " + url);
    }
    String path = rest.substring(slash + 1);
    String hosts = rest.substring(0, slash);
    int dbSlash = path.indexOf('/');
    String masterName =
        URLDecoder.decode(dbSlash < 0 ? path : path.substring(0, dbSlash), StandardCharsets.UTF_8);
    int database = 0;
    if (dbSlash >= 0 && dbSlash + 1 < path.length()) {
      try {
        database = Integer.parseInt(path.substring(dbSlash + 1));
      } catch (NumberFormatException e) {
        throw new UsageException("bad database in " + url);
      }
    }

    Config config = new Config();
    if (watchdogMs > 0) {
      config.setLockWatchdogTimeout(watchdogMs);
    }
    SentinelServersConfig sc = config.useSentinelServers();
    for (String node : hosts.split(",", -1)) {
      sc.addSentinelAddress(nodeAddress(node, 26379));
    }
    sc.setMasterName(masterName);
    if (database != 0) {
      sc.setDatabase(database);
    }
    sc.setCheckSentinelsList(false);
    sc.setReadMode(readMode);
    // Few idle connections: quicker start, and a readable MONITOR.
    sc.setMasterConnectionMinimumIdleSize(2);
    sc.setSlaveConnectionMinimumIdleSize(1);
    sc.setSubscriptionConnectionMinimumIdleSize(1);
    String[] data = credentials(userInfo);
    if (data[0] != null) {
      sc.setUsername(data[0]);
    }
    if (data[1] != null) {
      sc.setPassword(data[1]);
    }
    if (sentinelUsername != null) {
      sc.setSentinelUsername(sentinelUsername);
    }
    if (sentinelPassword != null) {
      sc.setSentinelPassword(sentinelPassword);
    }
    return config;
  }

  /**
   * ClusterServersConfig.setShardedSubscriptionMode(AUTO|ON|OFF), by reflection: the source also
   * compiles against 3.18.1, which lacks it and subscribes classic in a cluster, so there only
   * "off" (what it does anyway) is accepted.
   */
  private static void setShardedSubscription(ClusterServersConfig cc, String mode,
      String version) {
    Class<?> modes;
    try {
      modes = Class.forName(SHARDED_MODE_CLASS);
    } catch (ClassNotFoundException e) {
      if (mode.equals("off")) {
        return;
      }
      throw new UsageException("--sharded-subscription " + mode + ": Redisson " + version
          + " has no sharded subscription mode (classic pub/sub only)");
    }
    try {
      Object value = enumValue(modes, mode.toUpperCase(java.util.Locale.ROOT));
      ClusterServersConfig.class.getMethod("setShardedSubscriptionMode", modes).invoke(cc, value);
    } catch (InvocationTargetException e) {
      throw sneaky(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new UnsupportedException("unsupported: " + e);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object enumValue(Class<?> type, String name) {
    return Enum.valueOf((Class) type, name);
  }

  /** The configured mode in lower case ("auto", "on", "off"); "off" where it does not exist. */
  private static String shardedSubscription(ClusterServersConfig cc) {
    try {
      Object mode = ClusterServersConfig.class.getMethod("getShardedSubscriptionMode").invoke(cc);
      return String.valueOf(mode).toLowerCase(java.util.Locale.ROOT);
    } catch (NoSuchMethodException e) {
      return "off";
    } catch (ReflectiveOperationException e) {
      return "unknown: " + e;
    }
  }

  // ------------------------------------------------------------------------------------------
  // The command loop

  private void serve(InputStream in) {
    try (BufferedReader reader =
        new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (!dispatch(line)) {
          return;
        }
      }
    } catch (IOException e) {
      System.err.println("relock-redisson-driver: stdin: " + e);
    } finally {
      shutdown();
    }
  }

  /** Returns false when the driver must stop reading (exit). */
  private boolean dispatch(String line) {
    String trimmed = line.strip();
    if (trimmed.isEmpty()) {
      return true;
    }
    String[] tokens = trimmed.split("\\s+");
    String id = tokens[0];
    if (tokens.length < 3) {
      long now = System.nanoTime();
      reply(id, tokens.length > 1 ? tokens[1] : "", "", null,
          new UsageException("expected 'ID OWNER CMD ARGS...', got: " + trimmed), now, now);
      return true;
    }
    String owner = tokens[1];
    String cmd = tokens[2].toLowerCase(java.util.Locale.ROOT);
    String[] args = Arrays.copyOfRange(tokens, 3, tokens.length);

    if (cmd.equals("exit")) {
      long now = System.nanoTime();
      reply(id, owner, cmd, Boolean.TRUE, null, now, now);
      return false;
    }
    Handler handler = handlers.get(cmd);
    if (handler == null) {
      long now = System.nanoTime();
      reply(id, owner, cmd, null,
          new UsageException("unknown command '" + tokens[2] + "' (known: "
              + String.join(", ", handlers.keySet()) + ", exit)"), now, now);
      return true;
    }
    ExecutorService executor = owners.computeIfAbsent(owner, Driver::newOwnerThread);
    try {
      executor.execute(() -> run(id, owner, cmd, handler, args));
    } catch (RejectedExecutionException e) {
      long now = System.nanoTime();
      reply(id, owner, cmd, null, e, now, now);
    }
    return true;
  }

  private static ExecutorService newOwnerThread(String owner) {
    return Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "owner-" + owner);
      t.setDaemon(true);
      return t;
    });
  }

  private void run(String id, String owner, String cmd, Handler handler, String[] args) {
    long start = System.nanoTime();
    Object result = null;
    Throwable error = null;
    try {
      result = handler.run(args);
    } catch (Throwable e) {
      error = e;
    }
    if (error == null && result instanceof Deferred deferred) {
      deferred.stage().whenComplete(
          (value, failure) -> reply(id, owner, cmd, value, failure, start, System.nanoTime()));
      return;
    }
    long end = System.nanoTime();
    reply(id, owner, cmd, result, error, start, end);
  }

  private void reply(String id, String owner, String cmd, Object result, Throwable error,
      long startNs, long endNs) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("id", id);
    line.put("owner", owner);
    line.put("cmd", cmd);
    if (error == null) {
      line.put("ok", Boolean.TRUE);
      line.put("result", result);
    } else {
      line.put("ok", Boolean.FALSE);
      line.put("error", describe(error));
    }
    line.put("start_ns", startNs);
    line.put("end_ns", endNs);
    emit(line);
  }

  private void emit(Map<String, Object> line) {
    String text = Json.write(line);
    synchronized (protocol) {
      protocol.print(text);
      protocol.print('\n');
      protocol.flush();
    }
  }

  static String describe(Throwable e) {
    Throwable t = e;
    while ((t instanceof InvocationTargetException
        || t instanceof java.util.concurrent.ExecutionException
        || t instanceof java.util.concurrent.CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    String message = t.getMessage();
    String text = t.getClass().getSimpleName() + ": " + (message == null ? "" : message);
    // Redisson wraps an exception thrown in its own completion code (RPermitExpirableSemaphore's
    // release of an unknown id) in a RedisException "Unexpected exception while processing
    // command": name the cause too.
    Throwable cause = t.getCause();
    if (t instanceof org.redisson.client.RedisException && cause != null && cause != t) {
      text += " (caused by " + describe(cause) + ")";
    }
    return text;
  }

  private void shutdown() {
    if (exiting) {
      return;
    }
    exiting = true;
    // Whatever happens below, the process is gone within a few seconds.
    Thread reaper = new Thread(() -> {
      LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(8));
      Runtime.getRuntime().halt(0);
    }, "exit-deadline");
    reaper.setDaemon(true);
    reaper.start();

    for (ExecutorService e : owners.values()) {
      e.shutdownNow();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    for (ExecutorService e : owners.values()) {
      long left = deadline - System.nanoTime();
      try {
        if (left > 0) {
          e.awaitTermination(left, TimeUnit.NANOSECONDS);
        }
      } catch (InterruptedException ignored) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      redisson.shutdown(0, 2, TimeUnit.SECONDS);
    } catch (Throwable t) {
      System.err.println("relock-redisson-driver: shutdown: " + t);
    }
    synchronized (protocol) {
      protocol.flush();
    }
    System.exit(0);
  }

  // ------------------------------------------------------------------------------------------
  // Commands

  private void registerHandlers() {
    handlers.put("lock", a -> {
      need(a, 1, 2, "lock NAME [LEASE_MS]");
      RLock lock = lock(a[0]);
      if (a.length == 2) {
        lock.lock(millis(a[1], "LEASE_MS"), TimeUnit.MILLISECONDS);
      } else {
        lock.lock();
      }
      return Boolean.TRUE;
    });
    handlers.put("trylock", a -> {
      need(a, 2, 3, "trylock NAME WAIT_MS [LEASE_MS]");
      RLock lock = lock(a[0]);
      long wait = millis(a[1], "WAIT_MS");
      if (a.length == 3) {
        return lock.tryLock(wait, millis(a[2], "LEASE_MS"), TimeUnit.MILLISECONDS);
      }
      return lock.tryLock(wait, TimeUnit.MILLISECONDS);
    });
    handlers.put("unlock", a -> {
      need(a, 1, 1, "unlock NAME");
      lock(a[0]).unlock();
      return Boolean.TRUE;
    });
    handlers.put("forceunlock", a -> {
      need(a, 1, 1, "forceunlock NAME");
      return lock(a[0]).forceUnlock();
    });
    handlers.put("islocked", a -> {
      need(a, 1, 1, "islocked NAME");
      return lock(a[0]).isLocked();
    });
    handlers.put("isheld", a -> {
      need(a, 1, 1, "isheld NAME");
      return lock(a[0]).isHeldByCurrentThread();
    });
    handlers.put("holdcount", a -> {
      need(a, 1, 1, "holdcount NAME");
      return lock(a[0]).getHoldCount();
    });
    handlers.put("remainttl", a -> {
      need(a, 1, 1, "remainttl NAME");
      return lock(a[0]).remainTimeToLive();
    });
    handlers.put("threadid", a -> {
      need(a, 0, 0, "threadid");
      return Thread.currentThread().getId();
    });
    handlers.put("lockandgettoken", a -> {
      need(a, 1, 2, "lockandgettoken NAME [LEASE_MS]");
      Object fenced = fencedLock(a[0]);
      if (a.length == 2) {
        return invokeFenced(fenced, "lockAndGetToken", new Class<?>[] {long.class, TimeUnit.class},
            millis(a[1], "LEASE_MS"), TimeUnit.MILLISECONDS);
      }
      return invokeFenced(fenced, "lockAndGetToken", new Class<?>[] {});
    });
    handlers.put("trylockandgettoken", a -> {
      need(a, 2, 3, "trylockandgettoken NAME WAIT_MS [LEASE_MS]");
      Object fenced = fencedLock(a[0]);
      long wait = millis(a[1], "WAIT_MS");
      if (a.length == 3) {
        return invokeFenced(fenced, "tryLockAndGetToken",
            new Class<?>[] {long.class, long.class, TimeUnit.class}, wait,
            millis(a[2], "LEASE_MS"), TimeUnit.MILLISECONDS);
      }
      return invokeFenced(fenced, "tryLockAndGetToken",
          new Class<?>[] {long.class, TimeUnit.class}, wait, TimeUnit.MILLISECONDS);
    });
    handlers.put("gettoken", a -> {
      need(a, 1, 1, "gettoken NAME");
      return invokeFenced(fencedLock(a[0]), "getToken", new Class<?>[] {});
    });
    handlers.put("incloop", a -> {
      need(a, 4, 4, "incloop NAME COUNTER_KEY N PAUSE_US");
      return incloop(a[0], a[1], count(a[2], "N"), count(a[3], "PAUSE_US"));
    });
    handlers.put("qoffer", a -> {
      need(a, 2, 2, "qoffer NAME VALUE");
      return queue(a[0]).offer(a[1]);
    });
    handlers.put("qtake", a -> {
      need(a, 1, 1, "qtake NAME");
      return queue(a[0]).take();
    });
    handlers.put("qpoll", a -> {
      need(a, 2, 2, "qpoll NAME WAIT_MS");
      return queue(a[0]).poll(count(a[1], "WAIT_MS"), TimeUnit.MILLISECONDS);
    });
    handlers.put("qsize", a -> {
      need(a, 1, 1, "qsize NAME");
      return queue(a[0]).size();
    });
    handlers.put("doffer", a -> {
      need(a, 3, 3, "doffer DEST VALUE DELAY_MS");
      delayedQueue(a[0]).offer(a[1], count(a[2], "DELAY_MS"), TimeUnit.MILLISECONDS);
      return Boolean.TRUE;
    });
    handlers.put("ddestroy", a -> {
      need(a, 1, 1, "ddestroy DEST");
      RDelayedQueue<String> delayed = delayedQueues.remove(a[0]);
      if (delayed == null) {
        return Boolean.FALSE;
      }
      delayed.destroy();
      return Boolean.TRUE;
    });
    handlers.put("dsize", a -> {
      need(a, 1, 1, "dsize DEST");
      return delayedQueue(a[0]).size();
    });
    Synchronizers.register(handlers, redisson, redissonVersion);
    handlers.put("sleep", a -> {
      need(a, 1, 1, "sleep MS");
      Thread.sleep(millis(a[0], "MS"));
      return Boolean.TRUE;
    });
    handlers.put("ping", a -> {
      need(a, 0, 0, "ping");
      return "pong";
    });
  }

  private Json.Raw incloop(String name, String counterKey, long n, long pauseUs) {
    RLock lock = lock(name);
    RBucket<String> counter = redisson.getBucket(counterKey, StringCodec.INSTANCE);
    StringBuilder intervals = new StringBuilder(32 + (int) Math.min(n, 1 << 20) * 40);
    intervals.append("{\"intervals\":[");
    for (long i = 0; i < n; i++) {
      lock.lock();
      long acquired = System.nanoTime();
      long released;
      try {
        String current = counter.get();
        long value = current == null ? 0 : Long.parseLong(current);
        pauseMicros(pauseUs);
        counter.set(Long.toString(value + 1));
        released = System.nanoTime();
      } finally {
        lock.unlock();
      }
      if (i > 0) {
        intervals.append(',');
      }
      intervals.append('[').append(acquired).append(',').append(released).append(']');
    }
    intervals.append("]}");
    return new Json.Raw(intervals.toString());
  }

  private static void pauseMicros(long us) {
    if (us <= 0) {
      return;
    }
    long end = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(us);
    long left;
    while ((left = end - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while pausing");
      }
    }
  }

  static void need(String[] a, int min, int max, String usage) {
    if (a.length < min || a.length > max) {
      throw new UsageException("bad arguments; usage: " + usage);
    }
  }

  static long millis(String text, String what) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new UsageException(what + " must be an integer, got '" + text + "'");
    }
  }

  static long count(String text, String what) {
    long v = millis(text, what);
    if (v < 0) {
      throw new UsageException(what + " must be >= 0, got " + v);
    }
    return v;
  }

  // ------------------------------------------------------------------------------------------
  // Queues, all with StringCodec (a value is its UTF-8 bytes on the server, as relock sees them;
  // the default codec would wrap each value in a binary envelope). Commands are split on
  // whitespace, so a VALUE is one word: no spaces, tabs or line breaks in it.
  //   qoffer NAME VALUE            getBlockingQueue(NAME).offer(VALUE) -> boolean
  //   qtake NAME                   take() -> the value (waits as long as it takes, on the owner's
  //                                thread: that owner runs nothing else meanwhile)
  //   qpoll NAME WAIT_MS           poll(WAIT_MS, ms) -> the value, or null when none came
  //   qsize NAME                   size()
  //   doffer DEST VALUE DELAY_MS   getDelayedQueue(getBlockingQueue(DEST)).offer(VALUE, DELAY_MS,
  //                                ms) -> true: VALUE lands in DEST after DELAY_MS, moved there by
  //                                the delayed queue's transfer task in this driver's Redisson
  //   ddestroy DEST                that delayed queue's destroy() (stops its transfer task) ->
  //                                true; false when this driver had none for DEST
  //   dsize DEST                   that delayed queue's size() (values not yet due)
  // One RDelayedQueue per DEST per driver, made by the first doffer or dsize and kept until
  // ddestroy (after which the next one makes a new one) or exit.

  private RBlockingQueue<String> queue(String name) {
    if (name.isEmpty()) {
      throw new UsageException("empty queue name");
    }
    return redisson.getBlockingQueue(name, StringCodec.INSTANCE);
  }

  private RDelayedQueue<String> delayedQueue(String dest) {
    return delayedQueues.computeIfAbsent(dest, d -> redisson.getDelayedQueue(queue(d)));
  }

  // ------------------------------------------------------------------------------------------
  // Lock kinds: NAME | lock:NAME | fair:NAME | read:NAME | write:NAME | fenced:NAME | spin:NAME
  //   | multi:MEMBER,MEMBER,... (each MEMBER one of the others), so every lock command (lock,
  //   trylock, unlock, incloop...) also drives a RedissonMultiLock

  private RLock lock(String token) {
    if (token.startsWith(MULTI_PREFIX)) {
      return multiLock(token);
    }
    int colon = token.indexOf(':');
    String kind = colon > 0 ? token.substring(0, colon) : "";
    String name = colon > 0 ? token.substring(colon + 1) : token;
    switch (kind) {
      case "lock", "fair", "read", "write", "fenced", "spin" -> {
        if (name.isEmpty()) {
          throw new UsageException("empty lock name in '" + token + "'");
        }
      }
      default -> {
        kind = "lock";
        name = token;
      }
    }
    return switch (kind) {
      case "fair" -> redisson.getFairLock(name);
      case "read" -> redisson.getReadWriteLock(name).readLock();
      case "write" -> redisson.getReadWriteLock(name).writeLock();
      case "fenced" -> (RLock) fencedLockByName(name);
      // RSpinLock: the reentrant lock's data, no pub/sub; waiters back off (Redisson's default
      // exponential backoff, 1 ms doubling to 128 ms). In 3.18.1 and 4.x alike.
      case "spin" -> redisson.getSpinLock(name);
      default -> redisson.getLock(name);
    };
  }

  /**
   * getMultiLock(members...) for "multi:A,B,C": a RedissonMultiLock, which takes its members one
   * by one in the order given (waiting on one while keeping those before it; a failed wait gives
   * them all back) and releases them all at once. It has no data of its own: each member is an
   * ordinary hold of its kind, for the owner's thread. Its isLocked, isHeldByCurrentThread,
   * getHoldCount, remainTimeToLive and forceUnlock throw UnsupportedOperationException
   * (answered ok:false).
   */
  private RLock multiLock(String token) {
    String[] members = token.substring(MULTI_PREFIX.length()).split(",", -1);
    RLock[] locks = new RLock[members.length];
    for (int i = 0; i < members.length; i++) {
      if (members[i].isEmpty() || members[i].startsWith(MULTI_PREFIX)) {
        throw new UsageException("bad member '" + members[i] + "' in '" + token
            + "': multi:MEMBER,MEMBER,... takes NAME or KIND:NAME members, not multi");
      }
      locks[i] = lock(members[i]);
    }
    return redisson.getMultiLock(locks);
  }

  /** The fenced lock for NAME or fenced:NAME (other kinds are refused). */
  private Object fencedLock(String token) {
    boolean otherKind = token.matches("^(lock|fair|read|write|spin|multi):.*");
    String name = token.startsWith("fenced:") ? token.substring("fenced:".length()) : token;
    if (name.isEmpty() || otherKind) {
      throw new UsageException("token commands need a fenced lock: NAME or fenced:NAME, got '"
          + token + "'");
    }
    return fencedLockByName(name);
  }

  private Object fencedLockByName(String name) {
    Method getter;
    try {
      getter = RedissonClient.class.getMethod("getFencedLock", String.class);
    } catch (NoSuchMethodException e) {
      throw new UnsupportedException("unsupported: RedissonClient.getFencedLock does not exist in"
          + " Redisson " + redissonVersion);
    }
    try {
      return getter.invoke(redisson, name);
    } catch (InvocationTargetException e) {
      throw sneaky(e.getCause());
    } catch (IllegalAccessException e) {
      throw new UnsupportedException("unsupported: " + e);
    }
  }

  private Object invokeFenced(Object fenced, String method, Class<?>[] types, Object... args) {
    Method m;
    try {
      m = fenced.getClass().getMethod(method, types);
    } catch (NoSuchMethodException e) {
      throw new UnsupportedException("unsupported: RFencedLock." + method + " does not exist in"
          + " Redisson " + redissonVersion);
    }
    try {
      return m.invoke(fenced, args);
    } catch (InvocationTargetException e) {
      throw sneaky(e.getCause());
    } catch (IllegalAccessException e) {
      throw new UnsupportedException("unsupported: " + e);
    }
  }

  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
