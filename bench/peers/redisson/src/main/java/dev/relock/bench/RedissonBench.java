// SPDX-License-Identifier: Apache-2.0
package dev.relock.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongSupplier;

import javax.net.ssl.TrustManagerFactory;
import dev.relock.json.Json;

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RFencedLock;
import org.redisson.api.RList;
import org.redisson.api.RLock;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.BaseConfig;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.MasterSlaveServersConfig;
import org.redisson.config.ReadMode;
import org.redisson.config.SingleServerConfig;

/**
 * The Redisson peer of relock's benchmark (issue #10): one scenario, one repetition, one JSON
 * line on stdout, with the same scenario names, flags, bounds and fields as bench/relock_bench.
 *
 * <pre>
 *   java -jar relock-bench-redisson.jar --scenario NAME --rep N --url URL [--seconds S]
 *        [--threads T] [--warmup S] [--variant V] [--probe-url URL]
 * </pre>
 *
 * Scenarios: uncontended, n-locks, one-lock, handoff, rw-read, rw-mixed (many-held is relock's
 * own and is refused), cluster-n-locks: n-locks with a redis-cluster://h1:p1,h2:p2 URL, which
 * configures useClusterServers() with those nodes (the probe then sums over them), and the
 * other lock kinds (issue #17): fair-handoff (handoff on RFairLock, with a FIFO check) and
 * fenced-uncontended (uncontended with RFencedLock.lockAndGetToken()). A master with replicas is
 * the bench's own URL form redis://host:port?replicas=host:port[,host:port...]:
 * useMasterSlaveServers() with that master and those slaves, reading from the master, so
 * Redisson's default lock sync applies (WAIT after every lock write; bench/run's
 * uncontended-synced); the probe watches the master only. multi-3 is an uncontended
 * RedissonMultiLock over 3 RLocks; its --url is one URL (every member on that server) or 3
 * redis:// URLs separated by commas (member i on server i, one RedissonClient per server; the
 * probe sums over the servers). queue is offer + take pairs on an RBlockingQueue (StringCodec)
 * with T/2 producer threads and the other consumers; queue-delayed is an RDelayedQueue's
 * lateness at 1,000 elements/s with delays over 0-2 s (both as bench/queue.cpp). semaphore is
 * T threads looping acquire() + release() on one RSemaphore of T/2 permits (bench/semaphore.cpp);
 * latch is T awaiters on one RCountDownLatch that a coordinator opens round after round, each
 * await()'s return timed from the clock before countDown() (bench/latch.cpp).
 * rediss://host:port?tls_ca=FILE is one server over TLS, trusting the CA in FILE (bench/run's
 * tls- scenarios, see tlsOptions); the probe then needs --probe-url, the same server's plain
 * redis:// port (it speaks plain RESP).
 * Each mirrors its C++ twin in bench/*.cpp line by line: the same lock names, the same loops,
 * the same count bounds (per thread) and time bounds, the same grace before a blocked lock() is
 * cancelled (here: Thread.interrupt on lockInterruptibly()), the same server probe (CONFIG
 * RESETSTAT, then INFO cpu / commandstats over a connection of its own).
 *
 * JVM warm-up: before the measured window, the same scenario (same threads, same locks, same
 * client) runs for --warmup seconds (default 2) under the same count bounds, and its figures are
 * thrown away; the server statistics are reset after it.
 *
 * One RedissonClient per process (multi-3 on several servers: one per server, all alike),
 * shared by every thread, with Redisson's defaults (single server or cluster, default codec,
 * default pool sizes). "variant" names them as used, e.g. "4.7.0
 * codec=Kryo5Codec pool=64/24 sub=50/1" (connection pool max/min-idle, subscription pool
 * max/min-idle), unless --variant replaces it; "settings" always carries the full set.
 * Redisson-only extra fields, after the common ones: "warmup_s", "settings", "jvm".
 */
public final class RedissonBench {

  // ------------------------------------------------------------------------------------------
  // Options

  static final class Options {
    String scenario;
    String url = "redis://127.0.0.1:6379";
    String variant;  // null: computed from the client's configuration
    int rep = 1;
    double seconds = 3.0;
    int threads = 8;
    int locks = 10_000;  // many-held only; accepted for command-line parity
    double warmup = 2.0;
    String probeUrl;  // null: the probe connects where --url points
  }

  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private static final String USAGE =
      "usage: java -jar relock-bench-redisson.jar --scenario NAME --rep N --url URL [--seconds S]\n"
          + "                                         [--threads T] [--warmup S] [--variant V]\n"
          + "                                         [--probe-url URL] (the probe's plain"
          + " redis:// URL of the same server; default --url; needed with rediss://)\n"
          + "scenarios: uncontended n-locks one-lock handoff rw-read rw-mixed\n"
          + "           fair-handoff (RFairLock) fenced-uncontended (RFencedLock)\n"
          + "           cluster-n-locks (n-locks; give a redis-cluster://h1:p1,h2:p2 URL)\n"
          + "           multi-3 (RedissonMultiLock; --url URL, or URL1,URL2,URL3: one member"
          + " per server)\n"
          + "           queue (RBlockingQueue, StringCodec; --threads T: T/2 producers, the rest"
          + " consumers)\n"
          + "           queue-delayed (RDelayedQueue over an RBlockingQueue, StringCodec)\n"
          + "           semaphore (RSemaphore; --threads T on T/2 permits)\n"
          + "           latch (RCountDownLatch; --threads T awaiters)\n"
          + "prints one JSON line; exit 0 done, 1 failed, 2 bad usage";

  // ------------------------------------------------------------------------------------------
  // Samples: whole, in nanoseconds, so percentiles are exact (nearest rank) like the C++ ones.

  static final class Samples {
    // Every thread's samples as one set (each thread records its own, without sharing).
    static Samples merged(Samples[] perThread) {
      Samples all = new Samples();
      for (Samples s : perThread) {
        all.merge(s);
      }
      return all;
    }

    private long[] ns = new long[1024];
    private int n = 0;
    private boolean sorted = false;

    void add(long nanos) {
      if (n == ns.length) {
        ns = Arrays.copyOf(ns, n * 2);
      }
      ns[n++] = nanos;
      sorted = false;
    }

    void merge(Samples other) {
      for (int i = 0; i < other.n; i++) {
        add(other.ns[i]);
      }
    }

    int count() {
      return n;
    }

    /** Nearest-rank percentile in microseconds; q in [0, 1]. NaN when empty. */
    double percentileUs(double q) {
      if (n == 0) {
        return Double.NaN;
      }
      if (!sorted) {
        Arrays.sort(ns, 0, n);
        sorted = true;
      }
      long rank = (long) Math.ceil(q * n);
      rank = Math.max(1, Math.min(rank, n));
      return ns[(int) rank - 1] / 1000.0;
    }

    double maxUs() {
      return percentileUs(1.0);
    }
  }

  // The quantiles of a distribution field (pair_cdf_us, handoff_cdf_us), as relock_bench's
  // (bench/support.cpp, cdf_quantiles): the minimum ... 0.5 ... 0.999, the maximum.
  static final double[] CDF_QUANTILES = {0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5,
      0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1};

  // ------------------------------------------------------------------------------------------
  // The JSON line: fields in insertion order, numbers as C's %.6g, NaN as null (the shared
  // writer's BENCH layout, the same bytes as relock_bench's result::json).

  static final class Result {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    /** Sets a field; one already set keeps its place. */
    Result set(String name, Object v) {
      fields.put(name, v);
      return this;
    }

    /**
     * The samples' distribution as NAME_cdf_us, [[q, us], ...] at CDF_QUANTILES (null when
     * there are none), set right after NAME_p50_us as relock_bench sets it (bench/support.cpp,
     * result::set of a percentile): NAME is "pair" or "handoff"; bench/chart.py draws them.
     */
    Result cdf(String name, Samples s) {
      List<List<Double>> points = null;
      if (s.count() > 0) {
        points = new ArrayList<>();
        for (double q : CDF_QUANTILES) {
          points.add(List.of(q, s.percentileUs(q)));
        }
      }
      return set(name + "_cdf_us", points);
    }

    String json() {
      return Json.write(fields, Json.Style.BENCH);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Server probe: what the server saw during the window, over a plain connection of its own
  // (a few lines of RESP), exactly like relock_bench's server_probe: a redis-cluster:// URL gets
  // one connection per node it names, and the figures are the sums over them.

  static final class Probe implements AutoCloseable {
    private final List<Node> nodes = new ArrayList<>();
    private double cpuAtStart = 0;

    /** calls: all but our own INFO / CONFIG, including the commands scripts call (Redis 7
     *  counts those too); perCommand: "evalsha=2000,del=2000,...", in INFO's order (first node
     *  first); evalshaByNode: "127.0.0.1:7001=5000,..." (several nodes only, else null). */
    record Window(double cpuSeconds, long calls, long evalsha, String perCommand, int nodes,
        String evalshaByNode) {}

    /** redis://[user:pass@]host[:port][/db], or redis-cluster://[user:pass@]h1:p1,h2:p2[?...]. */
    Probe(String url) throws IOException {
      String rest = url;
      int p = rest.indexOf("://");
      if (p >= 0) {
        rest = rest.substring(p + 3);
      }
      p = rest.lastIndexOf('@');
      if (p >= 0) {
        rest = rest.substring(p + 1);
      }
      for (char end : new char[] {'/', '?'}) {
        p = rest.indexOf(end);
        if (p >= 0) {
          rest = rest.substring(0, p);
        }
      }
      try {
        for (String hostPort : rest.split(",")) {
          nodes.add(new Node(hostPort));
        }
      } catch (IOException e) {
        close();
        throw e;
      }
    }

    @Override
    public void close() throws IOException {
      for (Node n : nodes) {
        n.socket.close();
      }
    }

    private double cpuSeconds() throws IOException {
      double sum = 0;
      for (Node n : nodes) {
        String text = (String) n.command("INFO", "cpu");
        sum += Double.parseDouble(infoValue(text, "used_cpu_user"))
            + Double.parseDouble(infoValue(text, "used_cpu_sys"));
      }
      return sum;
    }

    /** CONFIG RESETSTAT and note the server's CPU. */
    void start() throws IOException {
      for (Node n : nodes) {
        n.command("CONFIG", "RESETSTAT");
      }
      cpuAtStart = cpuSeconds();
    }

    Window stop() throws IOException {
      double cpu = cpuSeconds() - cpuAtStart;
      long calls = 0;
      long evalsha = 0;
      Map<String, Long> perCommand = new LinkedHashMap<>();
      StringBuilder byNode = new StringBuilder();
      for (Node node : nodes) {
        // Lines look like: cmdstat_evalsha:calls=12,usec=...,...
        String text = (String) node.command("INFO", "commandstats");
        long nodeEvalsha = 0;
        for (String l : text.split("\r\n|\n")) {
          if (!l.startsWith("cmdstat_")) {
            continue;
          }
          int colon = l.indexOf(':');
          String name = l.substring(8, colon);
          int comma = l.indexOf(',', colon);
          long n = Long.parseLong(l.substring(colon + 7, comma < 0 ? l.length() : comma));
          if (name.startsWith("info") || name.startsWith("config")) {
            continue;
          }
          calls += n;
          perCommand.merge(name, n, Long::sum);
          if (name.equals("evalsha")) {
            nodeEvalsha = n;
          }
        }
        evalsha += nodeEvalsha;
        if (byNode.length() > 0) {
          byNode.append(',');
        }
        byNode.append(node.address).append('=').append(nodeEvalsha);
      }
      StringBuilder per = new StringBuilder();
      perCommand.forEach((name, n) -> {
        if (per.length() > 0) {
          per.append(',');
        }
        per.append(name).append('=').append(n);
      });
      return new Window(cpu, calls, evalsha, per.toString(), nodes.size(),
          nodes.size() > 1 ? byNode.toString() : null);
    }

    /** PUBSUB NUMSUB channel on the first node: the subscribers the server lists. */
    long numsub(String channel) throws IOException {
      Object r = nodes.get(0).command("PUBSUB", "NUMSUB", channel);
      if (!(r instanceof List<?> l) || l.size() != 2 || !(l.get(1) instanceof Long n)) {
        throw new IOException("probe: PUBSUB NUMSUB: unexpected reply " + r);
      }
      return n;
    }

    private static String infoValue(String text, String field) {
      for (String l : text.split("\r\n|\n")) {
        if (l.startsWith(field + ":")) {
          return l.substring(field.length() + 1);
        }
      }
      return "";
    }

    /** One server's connection. */
    private static final class Node {
      final String address;  // host:port
      final Socket socket;
      final InputStream in;
      final OutputStream out;

      Node(String hostPort) throws IOException {
        String host = hostPort;
        int port = 6379;
        int p = hostPort.lastIndexOf(':');
        if (p >= 0) {
          port = Integer.parseInt(hostPort.substring(p + 1));
          host = hostPort.substring(0, p);
        }
        address = host + ":" + port;
        socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), 5000);
        socket.setSoTimeout(5000);
        socket.setTcpNoDelay(true);
        in = new BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
      }

      Object command(String... args) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
        for (String a : args) {
          byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
          b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
          b.writeBytes(bytes);
          b.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        out.write(b.toByteArray());
        out.flush();
        return reply(args[0]);
      }

      private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
          if (c == '\r') {
            in.read();  // '\n'
            break;
          }
          b.write(c);
        }
        if (c == -1) {
          throw new IOException("probe: connection to " + address + " closed");
        }
        return b.toString(StandardCharsets.UTF_8);
      }

      private Object reply(String what) throws IOException {
        String l = line();
        char type = l.charAt(0);
        String body = l.substring(1);
        switch (type) {
          case '+':
            return body;
          case '-':
            throw new IOException("probe: " + address + ": " + what + ": " + body);
          case ':':
            return Long.parseLong(body);
          case '$': {
            int len = Integer.parseInt(body);
            if (len < 0) {
              return null;
            }
            byte[] data = in.readNBytes(len + 2);
            return new String(data, 0, len, StandardCharsets.UTF_8);
          }
          case '*': {
            int len = Integer.parseInt(body);
            if (len < 0) {
              return null;
            }
            List<Object> items = new ArrayList<>();
            for (int i = 0; i < len; i++) {
              items.add(reply(what));
            }
            return items;
          }
          default:
            throw new IOException("probe: " + address + ": " + what + ": unexpected reply " + l);
        }
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Shared helpers

  private final Options o;
  private final RedissonClient client;
  /** multi-3: the client of each server its --url names (the first is `client`). */
  private List<RedissonClient> serverClients = List.of();
  private final String variant;
  private final String settings;

  private RedissonBench(Options o, RedissonClient client, String variant, String settings) {
    this.o = o;
    this.client = client;
    this.variant = variant;
    this.settings = settings;
  }

  /** The calling process's CPU time (all JVM threads: ours, Netty's, JIT, GC), in seconds. */
  static double processCpuSeconds() {
    var os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime() / 1e9;
    }
    return Double.NaN;
  }

  static long seconds(double s) {
    return (long) (s * 1e9);
  }

  /** Sleeps at least `nanos`, like std::this_thread::sleep_for. */
  static void sleepAtLeast(long nanos) {
    final long until = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = until - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  /** A lock name's RLock; every thread asks for its own object, as relock's do. */
  RLock lock(String name) {
    return client.getLock(name);
  }

  /** A result with lib / variant / scenario / rep and every table field present (null). */
  Result makeResult() {
    Result r = new Result();
    r.set("lib", "redisson").set("variant", variant).set("scenario", o.scenario)
        .set("rep", (long) o.rep);
    for (String f : new String[] {"pairs_per_s", "acq_per_s", "pair_p50_us", "pair_p99_us",
        "handoff_p50_us", "handoff_p99_us", "handoffs_per_s", "wait_p50_us", "wait_p99_us",
        "wait_max_us", "rtt_p50_us"}) {
      r.set(f, null);
    }
    return r;
  }

  /** Fields every scenario reports: client and server CPU over the window, calls per op. */
  void addCommon(Result r, double window, double clientCpu, Probe.Window server, long ops) {
    r.set("window_s", window);
    r.set("client_cpu_pct", 100.0 * clientCpu / window);
    r.set("server_cpu_pct", 100.0 * server.cpuSeconds() / window);
    r.set("evalsha_per_op", ops > 0 ? (double) server.evalsha() / ops : Double.NaN);
    r.set("server_calls_per_op", ops > 0 ? (double) server.calls() / ops : Double.NaN);
    r.set("server_calls", server.perCommand());
    if (server.nodes() > 1) {
      r.set("server_nodes", (long) server.nodes());
      r.set("evalsha_by_node", server.evalshaByNode());
    }
    // Redisson-only: how the JVM was warmed, the client's settings, the JVM.
    r.set("warmup_s", o.warmup);
    r.set("settings", settings);
    r.set("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
  }


  /**
   * A phase of a scenario: the warm-up (probe == null: figures thrown away) or the measured
   * window. Both run the same code, so the JIT has compiled what the window runs.
   */
  @FunctionalInterface
  interface Scenario {
    Result run(double seconds, Probe probe) throws Exception;
  }

  /** Joins every worker; interrupting them (the C++ stop_token) once `deadline` has passed. */
  static void finish(List<Thread> workers, AtomicInteger finished, long deadline)
      throws InterruptedException {
    while (finished.get() < workers.size() && System.nanoTime() - deadline < 0) {
      Thread.sleep(5);
    }
    for (Thread w : workers) {
      if (w.isAlive()) {
        w.interrupt();
      }
    }
    for (Thread w : workers) {
      w.join();
    }
  }

  /** What a measured window saw: wall time, this process's CPU, the server (window_figures). */
  record Measured(double window, double cpu, Probe.Window server) {}

  /** The body of worker t: its loop, which ends on the clock (end, System.nanoTime) or a count. */
  @FunctionalInterface
  interface Worker {
    void run(int t, long end);
  }

  /**
   * The window around o.threads workers (relock_bench's run_window with join_or_cancel): starts
   * them, resets the server's statistics once all are ready (unless warming up: probe == null),
   * notes CPU and clock, opens the window, and joins them, interrupting a lock() still blocked 3 s
   * after its end. null when warming up.
   */
  Measured runWorkers(String name, double seconds, Probe probe, Worker body) throws Exception {
    final int threads = o.threads;
    final AtomicInteger finished = new AtomicInteger();
    final CountDownLatch ready = new CountDownLatch(threads);
    final CountDownLatch go = new CountDownLatch(1);
    final AtomicLong end = new AtomicLong();  // set before go opens; read only after it
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; ++t) {
      final int me = t;
      workers.add(start(name + "-" + me, () -> {
        try {
          ready.countDown();
          await(go);
          body.run(me, end.get());
        } finally {
          finished.incrementAndGet();
        }
      }));
    }
    ready.await();
    return openWindow(seconds, probe, end, go, workers, finished);
  }

  /**
   * Opens the window of workers waiting on go, ready to start: resets the server's statistics
   * (unless warming up: probe == null), notes CPU and clock, sets end, opens go, and joins the
   * workers, interrupting a lock() still blocked 3 s after the end. null when warming up.
   */
  Measured openWindow(double seconds, Probe probe, AtomicLong end, CountDownLatch go,
      List<Thread> workers, AtomicInteger finished) throws Exception {
    if (probe != null) {
      probe.start();
    }
    final double cpu0 = processCpuSeconds();
    final long t0 = System.nanoTime();
    end.set(t0 + seconds(seconds));
    go.countDown();
    finish(workers, finished, end.get() + seconds(3));
    final double window = (System.nanoTime() - t0) / 1e9;
    final double cpu = processCpuSeconds() - cpu0;
    return probe == null ? null : new Measured(window, cpu, probe.stop());
  }

  /** lockInterruptibly, counting a failure (cancelled: interrupted after the window; errors:
   *  anything else). false: the loop stops. */
  static boolean locked(RLock lock, AtomicLong cancelled, AtomicLong errors) {
    try {
      lock.lockInterruptibly();
      return true;
    } catch (InterruptedException e) {
      cancelled.incrementAndGet();
      return false;
    } catch (RuntimeException e) {
      errors.incrementAndGet();
      return false;
    }
  }

  /** unlock, counting a failure in errors. */
  static void unlocked(RLock lock, AtomicLong errors) {
    try {
      lock.unlock();
    } catch (RuntimeException e) {
      errors.incrementAndGet();
    }
  }

  static Thread start(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.start();
    return t;
  }

  static void await(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------------------------------------
  // uncontended: one thread, one lock, lock() + unlock() pairs back to back.
  // fenced-uncontended: the same loop on RFencedLock (client.getFencedLock), as in
  // bench/uncontended.cpp: lockAndGetToken() + unlock() pairs. One thread alone takes every
  // token in turn, so each must be the previous one + 1 ("token_gaps" counts those that were not).

  Result uncontended(double seconds, Probe probe) throws Exception {
    RLock lock = lock("bench:uncontended");
    return pairs(seconds, probe, lock, () -> {
      lock.lock();
      return 0;
    }, acquired -> { });
  }

  Result fencedUncontended(double seconds, Probe probe) throws Exception {
    RFencedLock lock = client.getFencedLock("bench:fenced-uncontended");
    return pairs(seconds, probe, lock, lock::lockAndGetToken, new TokenGaps(lock.getToken()));
  }

  /** What a pair loop checks after each pair, given what its acquire step returned. */
  @FunctionalInterface
  interface PairCheck {
    void after(long acquired);

    /** Its fields, after the pair loop's own. */
    default void report(Result r) {}
  }

  /** fenced-uncontended's check: each token the previous one + 1. */
  static final class TokenGaps implements PairCheck {
    final long first;
    long last;
    long gaps = 0;

    TokenGaps(Long current) {  // the counter before the window: its first token is the next
      last = current == null ? 0 : current;
      first = last + 1;
    }

    @Override
    public void after(long token) {
      if (token != last + 1) {
        ++gaps;
      }
      last = token;
    }

    @Override
    public void report(Result r) {
      r.set("first_token", first).set("last_token", last).set("token_gaps", gaps);
    }
  }

  /** The pair loop of both: acquire (lock(): 0, or lockAndGetToken()), then unlock(). */
  Result pairs(double seconds, Probe probe, RLock lock, LongSupplier acquire, PairCheck check)
      throws Exception {
    final long maxPairs = 2_000_000;
    Samples pair = new Samples();
    long pairs = 0;
    long errors = 0;
    if (probe != null) {
      probe.start();
    }
    final double cpu0 = processCpuSeconds();
    final long t0 = System.nanoTime();
    final long end = t0 + seconds(seconds);
    for (long now = t0; pairs < maxPairs && now - end < 0; ++pairs) {
      final long acquired = acquire.getAsLong();
      try {
        lock.unlock();
      } catch (RuntimeException e) {
        ++errors;
      }
      final long after = System.nanoTime();
      pair.add(after - now);
      now = after;
      check.after(acquired);
    }
    final double window = (System.nanoTime() - t0) / 1e9;
    final double cpu = processCpuSeconds() - cpu0;
    if (probe == null) {
      return null;
    }
    final Probe.Window server = probe.stop();

    Result r = makeResult();
    r.set("pairs_per_s", pairs / window)
        .set("pair_p50_us", pair.percentileUs(0.50))
        .cdf("pair", pair)
        .set("pair_p99_us", pair.percentileUs(0.99))
        .set("pair_max_us", pair.maxUs())
        .set("pairs", pairs)
        .set("errors", errors);
    check.report(r);
    addCommon(r, window, cpu, server, pairs);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // n-locks: T threads, T locks, each thread on its own lock; every thread shares the client.

  Result nLocks(double seconds, Probe probe) throws Exception {
    final int threads = o.threads;
    final long maxPairsPerThread = 1_000_000;
    final Samples[] pair = new Samples[threads];
    final long[] pairs = new long[threads];
    final long[] errors = new long[threads];
    final RLock[] locks = new RLock[threads];
    for (int t = 0; t < threads; ++t) {
      pair[t] = new Samples();
      locks[t] = lock("bench:n-locks:" + t);
    }
    final Measured w = runWorkers("n-locks", seconds, probe, (me, end) -> {
      final RLock lock = locks[me];
      for (long now = System.nanoTime(); pairs[me] < maxPairsPerThread && now - end < 0;
          ++pairs[me]) {
        lock.lock();
        try {
          lock.unlock();
        } catch (RuntimeException e) {
          ++errors[me];
        }
        final long after = System.nanoTime();
        pair[me].add(after - now);
        now = after;
      }
    });
    if (w == null) {
      return null;
    }

    Samples all = Samples.merged(pair);
    long total = Arrays.stream(pairs).sum();
    long failed = Arrays.stream(errors).sum();
    Result r = makeResult();
    r.set("pairs_per_s", total / w.window())
        .set("pair_p50_us", all.percentileUs(0.50))
        .cdf("pair", all)
        .set("pair_p99_us", all.percentileUs(0.99))
        .set("pair_max_us", all.maxUs())
        .set("threads", (long) threads)
        .set("pairs", total)
        .set("errors", failed);
    addCommon(r, w.window(), w.cpu(), w.server(), total);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // one-lock: T threads on one lock, empty critical section.

  Result oneLock(double seconds, Probe probe) throws Exception {
    final int threads = o.threads;
    final long maxAcquisitionsPerThread = 1_000_000;
    final Samples[] wait = new Samples[threads];
    final long[] acquisitions = new long[threads];
    final AtomicInteger lastHolder = new AtomicInteger(-1);
    final AtomicLong ownerChanges = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong overlaps = new AtomicLong();
    final AtomicInteger inside = new AtomicInteger();
    final RLock[] locks = new RLock[threads];
    for (int t = 0; t < threads; ++t) {
      wait[t] = new Samples();
      locks[t] = lock("bench:one-lock");
    }
    final Measured w = runWorkers("one-lock", seconds, probe, (me, end) -> {
      final RLock lock = locks[me];
      for (long now = System.nanoTime();
          acquisitions[me] < maxAcquisitionsPerThread && now - end < 0;
          now = System.nanoTime()) {
        if (!locked(lock, cancelled, errors)) {
          break;
        }
        wait[me].add(System.nanoTime() - now);
        ++acquisitions[me];
        if (inside.getAndIncrement() != 0) {
          overlaps.incrementAndGet();
        }
        if (lastHolder.getAndSet(me) != me) {
          ownerChanges.incrementAndGet();
        }
        inside.decrementAndGet();
        unlocked(lock, errors);
      }
    });
    if (w == null) {
      return null;
    }

    Samples all = Samples.merged(wait);
    long total = Arrays.stream(acquisitions).sum();
    Result r = makeResult();
    r.set("acq_per_s", total / w.window())
        .set("wait_p50_us", all.percentileUs(0.50))
        .set("wait_p99_us", all.percentileUs(0.99))
        .set("wait_max_us", all.maxUs())
        .set("owner_changes_per_s", ownerChanges.get() / w.window())
        .set("threads", (long) threads)
        .set("acquisitions", total)
        .set("cancelled", cancelled.get())
        .set("errors", errors.get())
        .set("overlaps", overlaps.get());
    addCommon(r, w.window(), w.cpu(), w.server(), total);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // handoff: T threads on one lock. The holder keeps it 1 ms, releases, then waits until another
  // thread holds it before queueing again, so every release is a handoff to a waiter. Handoff
  // latency runs from the start of the unlock() call to the moment another thread's lock()
  // returns: release, pub/sub message, wake-up, acquire.
  // fair-handoff: the same loop on RFairLock (client.getFairLock), as in bench/handoff.cpp.
  //
  // FIFO: every lock call takes a ticket, the next number of one sequence, just before it
  // starts; an acquisition is out of order when another thread still waiting holds an older
  // ticket ("out_of_order"; "fifo_checked" counts the acquisitions checked). Waiters join the
  // queue one at a time, so that tickets follow the order in which waits reached the server.
  // Fair lock (staged): before the window, thread 0 takes the lock, then threads 1..T-1 call
  // lock in turn, each once the server's queue (redisson_lock_queue:{name}) holds exactly the
  // threads before it and itself last; thread 0 holds until the window opens (first waits are
  // not samples). Reentrant lock: Redis keeps no queue of its waiters to stage by, so every
  // thread makes its first lock call as the window opens, all at once; those first waits take
  // no ticket (neither checked nor checked against). In the window one thread alone starts
  // waiting per hold: the previous holder, once its successor holds, and the next one more than
  // a hold (1 ms) later.

  private static final long NO_UNLOCK = Long.MIN_VALUE;

  Result handoff(double seconds, Probe probe) throws Exception {
    return handoffOn(seconds, probe, "bench:handoff", this::lock, false);
  }

  Result fairHandoff(double seconds, Probe probe) throws Exception {
    return handoffOn(seconds, probe, "bench:fair-handoff", client::getFairLock, true);
  }

  /** handoff's loop on `name`'s lock as `kind` makes it; staged: its waiters queue in Redis. */
  Result handoffOn(double seconds, Probe probe, String name, Function<String, RLock> kind,
      boolean staged) throws Exception {
    final int threads = o.threads;
    final long hold = TimeUnit.MILLISECONDS.toNanos(1);
    final long maxAcquisitionsPerThread = 100_000;
    final long noTicket = Long.MAX_VALUE;
    final Samples[] wait = new Samples[threads];
    final Samples[] handoff = new Samples[threads];
    final String[] fields = new String[threads];  // each thread's owner field, as queued
    final AtomicLong unlockStarted = new AtomicLong(NO_UNLOCK);  // nanoTime of the last unlock()
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong overlaps = new AtomicLong();
    final AtomicLong selfHandoffs = new AtomicLong();
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger lastHolder = new AtomicInteger(-1);
    final AtomicInteger finished = new AtomicInteger();
    final AtomicBoolean firstHeld = new AtomicBoolean();
    final AtomicLong end = new AtomicLong();  // set before go opens; read only after it
    final ReentrantLock m = new ReentrantLock();
    final Condition heldByNewOwner = m.newCondition();
    // Under m: generation (bumps with every acquisition), the next ticket, each waiting
    // thread's ticket, acquisitions checked, acquisitions out of order.
    final long[] generation = {0};
    final long[] nextTicket = {0};
    final long[] ticket = new long[threads];
    final long[] fifo = {0, 0};
    final RLock[] locks = new RLock[threads];
    final CountDownLatch[] stage = new CountDownLatch[threads];  // staged: t's first lock call
    for (int t = 0; t < threads; ++t) {
      wait[t] = new Samples();
      handoff[t] = new Samples();
      ticket[t] = noTicket;
      locks[t] = kind.apply(name);
      stage[t] = new CountDownLatch(1);
    }
    final CountDownLatch ready = new CountDownLatch(threads);
    final CountDownLatch go = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; ++t) {
      final int me = t;
      workers.add(start(o.scenario + "-" + me, () -> {
        try {
          fields[me] = client.getId() + ":" + Thread.currentThread().getId();
          ready.countDown();
          await(staged ? stage[me] : go);
          final RLock lock = locks[me];
          boolean first = true;  // this thread's first lock call (see above)
          for (long n = 0; n < maxAcquisitionsPerThread; ++n) {
            final boolean beforeWindow = first && staged;  // staged: no wait sample
            final boolean unordered = first && !staged;  // all at once: no ticket
            final long asked = System.nanoTime();
            m.lock();
            try {
              if (!beforeWindow && asked - end.get() >= 0) {
                break;
              }
              if (!unordered) {
                ticket[me] = nextTicket[0]++;
              }
            } finally {
              m.unlock();
            }
            if (!locked(lock, cancelled, errors)) {
              m.lock();
              try {
                ticket[me] = noTicket;
              } finally {
                m.unlock();
              }
              break;
            }
            final long acquired = System.nanoTime();
            if (!beforeWindow) {
              wait[me].add(acquired - asked);
            }
            final long from = unlockStarted.getAndSet(NO_UNLOCK);
            if (from != NO_UNLOCK) {
              handoff[me].add(acquired - from);
            }
            if (inside.getAndIncrement() != 0) {
              overlaps.incrementAndGet();
            }
            if (lastHolder.getAndSet(me) == me) {
              selfHandoffs.incrementAndGet();
            }
            final long mine;
            m.lock();
            try {
              if (!unordered) {
                ++fifo[0];
                for (int u = 0; u < threads; ++u) {
                  if (u != me && ticket[u] < ticket[me]) {  // u asked earlier and still waits
                    ++fifo[1];
                    break;
                  }
                }
              }
              ticket[me] = noTicket;
              mine = ++generation[0];
              heldByNewOwner.signalAll();
            } finally {
              m.unlock();
            }
            if (beforeWindow && me == 0) {  // the first holder holds until the window opens
              firstHeld.set(true);
              await(go);
            }
            first = false;

            sleepAtLeast(hold);
            inside.decrementAndGet();
            unlockStarted.set(System.nanoTime());
            unlocked(lock, errors);
            // Wait for another thread to take it, so this thread cannot take its own lock back.
            boolean taken = true;
            m.lock();
            try {
              while (generation[0] == mine) {
                long left = end.get() - System.nanoTime();
                if (left <= 0) {
                  taken = false;
                  break;
                }
                heldByNewOwner.awaitNanos(left);
              }
            } catch (InterruptedException e) {
              taken = false;
              Thread.currentThread().interrupt();
            } finally {
              m.unlock();
            }
            if (!taken) {
              break;
            }
          }
        } finally {
          finished.incrementAndGet();
        }
      }));
    }
    ready.await();

    // Staged: build the queue one waiter at a time (see above).
    String stagingError = null;
    try {
      final RList<String> queue =
          client.getList("redisson_lock_queue:{" + name + "}", StringCodec.INSTANCE);
      final long deadline = System.nanoTime() + seconds(10);
      for (int t = 0; staged && t < threads && stagingError == null; ++t) {
        stage[t].countDown();
        while (true) {
          boolean inPlace = t == 0 && firstHeld.get();
          if (t > 0) {
            List<String> q = queue.readAll();
            inPlace = q.size() == t;
            for (int i = 0; inPlace && i < q.size(); ++i) {
              inPlace = q.get(i).equals(fields[i + 1]);
            }
          }
          if (inPlace) {
            break;
          }
          if (System.nanoTime() - deadline > 0) {
            stagingError = "thread " + t + " was not queued in turn within 10 s";
            break;
          }
          Thread.sleep(1);
        }
      }
    } catch (RuntimeException e) {
      stagingError = "queueing the waiters: " + e;
    }
    if (stagingError != null) {
      end.set(System.nanoTime());
      for (CountDownLatch s : stage) {
        s.countDown();
      }
      go.countDown();
      for (Thread w : workers) {
        w.interrupt();
      }
      for (Thread w : workers) {
        w.join();
      }
      throw new IllegalStateException(stagingError);
    }

    final Measured w = openWindow(seconds, probe, end, go, workers, finished);
    if (w == null) {
      return null;
    }

    Samples waits = Samples.merged(wait);
    Samples handoffs = Samples.merged(handoff);
    final long acquisitions = waits.count();
    Result r = makeResult();
    r.set("acq_per_s", acquisitions / w.window())
        .set("handoff_p50_us", handoffs.percentileUs(0.50))
        .cdf("handoff", handoffs)
        .set("handoff_p99_us", handoffs.percentileUs(0.99))
        .set("handoff_max_us", handoffs.maxUs())
        .set("handoffs_per_s", handoffs.count() / w.window())
        .set("wait_p50_us", waits.percentileUs(0.50))
        .set("wait_p99_us", waits.percentileUs(0.99))
        .set("wait_max_us", waits.maxUs())
        .set("threads", (long) threads)
        .set("clients", 1L)
        .set("handoffs", (long) handoffs.count())
        .set("fifo_checked", fifo[0])
        .set("out_of_order", fifo[1])
        .set("cancelled", cancelled.get())
        .set("errors", errors.get())
        .set("overlaps", overlaps.get())
        .set("self_handoffs", selfHandoffs.get());
    addCommon(r, w.window(), w.cpu(), w.server(), acquisitions);
    return r;
  }
  // ------------------------------------------------------------------------------------------
  // The read-write lock (RReadWriteLock), every worker thread an owner, as in bench/read_write.cpp.
  // rw-read: T threads take and release the read side of one lock, empty critical section.

  /** A name's RReadWriteLock; every thread asks for its own object, as relock's do. */
  RReadWriteLock readWriteLock(String name) {
    return client.getReadWriteLock(name);
  }

  Result rwRead(double seconds, Probe probe) throws Exception {
    final int threads = o.threads;
    final long maxPairsPerThread = 1_000_000;
    final Samples[] pair = new Samples[threads];
    final RLock[] reads = new RLock[threads];
    for (int t = 0; t < threads; ++t) {
      pair[t] = new Samples();
      reads[t] = readWriteLock("bench:rw-read").readLock();
    }
    final long[] pairs = new long[threads];
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final Measured w = runWorkers("rw-read", seconds, probe, (me, end) -> {
      final RLock read = reads[me];
      for (long now = System.nanoTime(); pairs[me] < maxPairsPerThread && now - end < 0; ) {
        if (!locked(read, cancelled, errors)) {
          break;
        }
        unlocked(read, errors);
        ++pairs[me];
        final long after = System.nanoTime();
        pair[me].add(after - now);
        now = after;
      }
    });
    if (w == null) {
      return null;
    }

    Samples all = Samples.merged(pair);
    long total = Arrays.stream(pairs).sum();
    Result r = makeResult();
    r.set("acq_per_s", total / w.window())
        .set("pair_p50_us", all.percentileUs(0.50))
        .cdf("pair", all)
        .set("pair_p99_us", all.percentileUs(0.99))
        .set("pair_max_us", all.maxUs())
        .set("threads", (long) threads)
        .set("acquisitions", total)
        .set("cancelled", cancelled.get())
        .set("errors", errors.get());
    addCommon(r, w.window(), w.cpu(), w.server(), total);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // rw-mixed: T threads on one lock; each loop a seeded RNG picks a read (90 %) or a write
  // (10 %). A write holds 1 ms (a sleep inside the hold), a read holds nothing. The write wait
  // runs from asking for the write lock to getting it.

  Result rwMixed(double seconds, Probe probe) throws Exception {
    final int threads = o.threads;
    final double writeShare = 0.10;
    final long hold = TimeUnit.MILLISECONDS.toNanos(1);
    final long maxOpsPerThread = 1_000_000;
    final long seed = 20261123;  // thread t draws from seed + t: the same every run
    final Samples[] readWait = new Samples[threads];
    final Samples[] writeWait = new Samples[threads];
    final RReadWriteLock[] rws = new RReadWriteLock[threads];
    for (int t = 0; t < threads; ++t) {
      readWait[t] = new Samples();
      writeWait[t] = new Samples();
      rws[t] = readWriteLock("bench:rw-mixed");
    }
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong overlaps = new AtomicLong();
    final AtomicInteger readersInside = new AtomicInteger();
    final AtomicInteger writersInside = new AtomicInteger();
    final Measured w = runWorkers("rw-mixed", seconds, probe, (me, end) -> {
      final RLock read = rws[me].readLock();
      final RLock write = rws[me].writeLock();
      final SplittableRandom rng = new SplittableRandom(seed + me);
      for (long n = 0; n < maxOpsPerThread; ++n) {
        final long asked = System.nanoTime();
        if (asked - end >= 0) {
          break;
        }
        final boolean isWrite = rng.nextDouble() < writeShare;
        final RLock side = isWrite ? write : read;
        if (!locked(side, cancelled, errors)) {
          break;
        }
        (isWrite ? writeWait : readWait)[me].add(System.nanoTime() - asked);
        if (isWrite) {
          if (writersInside.getAndIncrement() != 0 || readersInside.get() != 0) {
            overlaps.incrementAndGet();
          }
          sleepAtLeast(hold);
          writersInside.decrementAndGet();
        } else {
          readersInside.incrementAndGet();
          if (writersInside.get() != 0) {
            overlaps.incrementAndGet();
          }
          readersInside.decrementAndGet();
        }
        unlocked(side, errors);
      }
    });
    if (w == null) {
      return null;
    }

    Samples reads = Samples.merged(readWait);
    Samples writes = Samples.merged(writeWait);
    final long nReads = reads.count();
    final long nWrites = writes.count();
    Result r = makeResult();
    r.set("acq_per_s", (nReads + nWrites) / w.window())
        .set("reads_per_s", nReads / w.window())
        .set("writes_per_s", nWrites / w.window())
        .set("write_wait_p50_us", writes.percentileUs(0.50))
        .set("write_wait_p99_us", writes.percentileUs(0.99))
        .set("write_wait_max_us", writes.maxUs())
        .set("read_wait_p50_us", reads.percentileUs(0.50))
        .set("read_wait_p99_us", reads.percentileUs(0.99))
        .set("read_wait_max_us", reads.maxUs())
        .set("threads", (long) threads)
        .set("reads", nReads)
        .set("writes", nWrites)
        .set("cancelled", cancelled.get())
        .set("errors", errors.get())
        .set("overlaps", overlaps.get());
    addCommon(r, w.window(), w.cpu(), w.server(), nReads + nWrites);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // multi-3: one thread, an uncontended RedissonMultiLock over 3 RLocks (bench:multi-3:0 to 2;
  // member i on server i % servers, each server's own RedissonClient), lock() + unlock() pairs
  // back to back; beside it, on the same thread in the same window, one RLock's pairs
  // (bench:multi-3:single, on the first server), the single-lock pair it is set against. As
  // bench/multi_lock.cpp: the loops alternate in blocks of 50 pairs, each pair timed on its own;
  // pairs_per_s is multi pairs per second spent in them; evalsha_per_op is per member pair (3
  // per multi pair, 1 per single pair).

  static final int MULTI_MEMBERS = 3;

  Result multi3(double seconds, Probe probe) throws Exception {
    RLock[] parts = new RLock[MULTI_MEMBERS];
    for (int i = 0; i < MULTI_MEMBERS; ++i) {
      parts[i] = serverClients.get(i % serverClients.size()).getLock("bench:multi-3:" + i);
    }
    RLock multi = new RedissonMultiLock(parts);
    RLock single = lock("bench:multi-3:single");
    final long maxPairs = 1_000_000;  // each loop
    final int block = 50;
    Samples multiPair = new Samples();
    Samples singlePair = new Samples();
    long multiPairs = 0;
    long singlePairs = 0;
    long multiNanos = 0;
    long errors = 0;
    if (probe != null) {
      probe.start();
    }
    final double cpu0 = processCpuSeconds();
    final long t0 = System.nanoTime();
    final long end = t0 + seconds(seconds);
    long now = t0;
    while (now - end < 0 && multiPairs < maxPairs) {
      for (int i = 0; i < block && now - end < 0; ++i, ++multiPairs) {
        multi.lock();
        try {
          multi.unlock();
        } catch (RuntimeException e) {
          ++errors;
        }
        final long after = System.nanoTime();
        multiPair.add(after - now);
        multiNanos += after - now;
        now = after;
      }
      for (int i = 0; i < block && now - end < 0; ++i, ++singlePairs) {
        single.lock();
        try {
          single.unlock();
        } catch (RuntimeException e) {
          ++errors;
        }
        final long after = System.nanoTime();
        singlePair.add(after - now);
        now = after;
      }
    }
    final double window = (System.nanoTime() - t0) / 1e9;
    final double cpu = processCpuSeconds() - cpu0;
    if (probe == null) {
      return null;
    }
    final Probe.Window server = probe.stop();

    final double p50 = multiPair.percentileUs(0.50);
    final double singleP50 = singlePair.percentileUs(0.50);
    Result r = makeResult();
    r.set("pairs_per_s", multiNanos > 0 ? multiPairs / (multiNanos / 1e9) : 0.0)
        .set("pair_p50_us", p50)
        .set("pair_p99_us", multiPair.percentileUs(0.99))
        .set("pair_max_us", multiPair.maxUs())
        .set("pairs", multiPairs)
        .set("single_pair_p50_us", singleP50)
        .set("single_pair_p99_us", singlePair.percentileUs(0.99))
        .set("single_pairs", singlePairs)
        .set("vs_single_pair", p50 / singleP50)
        .set("over_single_pair_us", p50 - singleP50)
        .set("members", (long) MULTI_MEMBERS)
        .set("servers", (long) serverClients.size())
        .set("errors", errors);
    addCommon(r, window, cpu, server, MULTI_MEMBERS * multiPairs + singlePairs);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // queue: as bench/queue.cpp. P producer threads and C consumer threads (--threads T: P = T/2,
  // C = T - P) on one RBlockingQueue with StringCodec (the same bytes as relock's): producers
  // offer (RPUSH) "p<t>:<seq>" as fast as they can until the window ends, consumers take()
  // (BLPOP) and note what they got. pairs_per_s counts the elements taken inside the window,
  // per second of it. Once the producers have stopped, one "stop" element per consumer goes to
  // the tail, so the consumers drain the backlog and end on it; a take() still waiting 30 s after
  // the window is interrupted. Then every element is checked (lost, duplicates, left in the
  // list). The server figures cover the window (until the producers have stopped), not the
  // drain. The warm-up runs on a name of its own (bench:queue:warmup), so none of its elements
  // (nor a take() it left waiting) can reach the measured loop.

  static final String QUEUE_STOP = "stop";

  /** A growable list of longs (the ids a consumer took). */
  static final class Longs {
    long[] v = new long[1024];
    int n = 0;

    void add(long x) {
      if (n == v.length) {
        v = Arrays.copyOf(v, n * 2);
      }
      v[n++] = x;
    }
  }

  /** "p<t>:<seq>" -> t << 40 | seq; -1 for anything else. */
  static long elementId(String v) {
    if (v.length() < 4 || v.charAt(0) != 'p') {
      return -1;
    }
    int colon = v.indexOf(':');
    if (colon < 2 || colon + 1 >= v.length()) {
      return -1;
    }
    try {
      return Long.parseLong(v.substring(1, colon)) << 40 | Long.parseLong(v.substring(colon + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  Result queue(double seconds, Probe probe) throws Exception {
    final RBlockingQueue<String> queue = client.getBlockingQueue(
        probe == null ? "bench:queue:warmup" : "bench:queue", StringCodec.INSTANCE);
    queue.delete();
    final int producers = Math.max(1, o.threads / 2);
    final int consumers = Math.max(1, o.threads - producers);
    final long maxPerProducer = 1_000_000;
    final long[] offered = new long[producers];
    final long[] inWindow = new long[consumers];
    final long[] errors = new long[producers + consumers];
    final long[] foreign = new long[consumers];
    final long[] cancelled = new long[consumers];
    final Samples[] offerTime = new Samples[producers];
    final Longs[] got = new Longs[consumers];
    final CountDownLatch ready = new CountDownLatch(producers + consumers);
    final CountDownLatch go = new CountDownLatch(1);
    final AtomicLong end = new AtomicLong();  // set before go opens; read only after it
    final AtomicInteger consumersDone = new AtomicInteger();
    List<Thread> producerThreads = new ArrayList<>();
    List<Thread> consumerThreads = new ArrayList<>();
    for (int t = 0; t < producers; ++t) {
      final int me = t;
      offerTime[me] = new Samples();
      producerThreads.add(start("queue-producer-" + me, () -> {
        final String prefix = "p" + me + ":";
        ready.countDown();
        await(go);
        final long stop = end.get();
        for (long now = System.nanoTime(); now - stop < 0 && offered[me] < maxPerProducer; ) {
          try {
            queue.offer(prefix + offered[me]);
            ++offered[me];
          } catch (RuntimeException e) {
            ++errors[me];  // not offered: the next try uses the same number
          }
          final long after = System.nanoTime();
          offerTime[me].add(after - now);
          now = after;
        }
      }));
    }
    for (int c = 0; c < consumers; ++c) {
      final int me = c;
      got[me] = new Longs();
      consumerThreads.add(start("queue-consumer-" + me, () -> {
        try {
          ready.countDown();
          await(go);
          final long stop = end.get();
          while (true) {
            String v;
            try {
              v = queue.take();
            } catch (InterruptedException e) {
              ++cancelled[me];
              break;
            } catch (RuntimeException e) {
              ++errors[producers + me];
              continue;
            }
            if (v.equals(QUEUE_STOP)) {
              break;
            }
            if (System.nanoTime() - stop < 0) {
              ++inWindow[me];
            }
            final long id = elementId(v);
            if (id < 0) {
              ++foreign[me];
            } else {
              got[me].add(id);
            }
          }
        } finally {
          consumersDone.incrementAndGet();
        }
      }));
    }
    ready.await();
    if (probe != null) {
      probe.start();
    }
    final double cpu0 = processCpuSeconds();
    final long t0 = System.nanoTime();
    end.set(t0 + seconds(seconds));
    go.countDown();
    for (Thread p : producerThreads) {
      p.join();
    }
    final double window = (System.nanoTime() - t0) / 1e9;
    final double cpu = processCpuSeconds() - cpu0;
    final Probe.Window server = probe == null ? null : probe.stop();
    final long totalOffered = Arrays.stream(offered).sum();
    final long pairs = Arrays.stream(inWindow).sum();

    // Drain: one stop element per consumer, after every element offered.
    final long drainStart = System.nanoTime();
    for (int c = 0; c < consumers; ++c) {
      queue.offer(QUEUE_STOP);
    }
    finish(consumerThreads, consumersDone, end.get() + seconds(30));
    final double drain = (System.nanoTime() - drainStart) / 1e9;

    int size = 0;
    for (Longs g : got) {
      size += g.n;
    }
    long[] all = new long[size];
    int k = 0;
    for (Longs g : got) {
      System.arraycopy(g.v, 0, all, k, g.n);
      k += g.n;
    }
    Arrays.sort(all);
    long duplicates = 0;
    long unknown = Arrays.stream(foreign).sum();
    long distinct = 0;
    for (int i = 0; i < all.length; ++i) {
      if (i > 0 && all[i] == all[i - 1]) {
        ++duplicates;
        continue;
      }
      final long t = all[i] >>> 40;
      final long seq = all[i] & ((1L << 40) - 1);
      if (t >= producers || seq >= offered[(int) t]) {
        ++unknown;
      } else {
        ++distinct;
      }
    }
    final long left = queue.size();
    queue.delete();
    if (probe == null) {
      return null;
    }

    Samples offers = Samples.merged(offerTime);
    Result r = makeResult();
    r.set("pairs_per_s", pairs / seconds)
        .set("offers_per_s", totalOffered / seconds)
        .set("pairs", pairs)
        .set("offered", totalOffered)
        .set("taken", (long) all.length)
        .set("backlog", totalOffered - pairs)
        .set("lost", totalOffered - distinct)
        .set("duplicates", duplicates)
        .set("unknown", unknown)
        .set("left", left)
        .set("offer_p50_us", offers.percentileUs(0.50))
        .set("offer_p99_us", offers.percentileUs(0.99))
        .set("drain_s", drain)
        .set("producers", (long) producers)
        .set("consumers", (long) consumers)
        .set("cancelled", Arrays.stream(cancelled).sum())
        .set("errors", Arrays.stream(errors).sum());
    addCommon(r, window, cpu, server, pairs);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // queue-delayed: as bench/queue.cpp. One thread offers to an RDelayedQueue (over the
  // RBlockingQueue bench:queue-delayed, StringCodec) at a steady 1,000 elements/s for the window,
  // each with a delay in [0, 2000] ms (splitmix64 of the repetition and the element's index: the
  // same delays as relock's), its value "<index>:<due>" with the due time in wall-clock ms (read
  // just before the offer, as Redisson reads its own); this client, which has the delayed queue
  // open, runs the transfer; another thread take()s from the destination and notes, per element,
  // arrival (wall clock, microseconds) minus due time. Early, lost and duplicated elements are
  // counted. The figures run until every element has arrived, or 5 s after the last one came
  // due. The warm-up (the same at the same rate, for --warmup seconds) uses a destination of its
  // own, destroyed after it.

  static final int DELAYED_RATE = 1_000;  // elements per second
  static final long DELAYED_MAX_DELAY = 2_000;  // ms; delays in [0, DELAYED_MAX_DELAY]

  /** splitmix64, as bench/queue.cpp's (the delays of queue-delayed). */
  static long splitmix64(long x) {
    x += 0x9E3779B97F4A7C15L;
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }

  static long wallMicros() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  Result queueDelayed(double seconds, Probe probe) throws Exception {
    final RBlockingQueue<String> destination = client.getBlockingQueue(
        probe == null ? "bench:queue-delayed:warmup" : "bench:queue-delayed",
        StringCodec.INSTANCE);
    final RDelayedQueue<String> delayed = client.getDelayedQueue(destination);
    delayed.clear();
    destination.delete();
    final int maxElements = (int) (seconds * DELAYED_RATE) + 1;
    final int[] seen = new int[maxElements];
    final Samples lateness = new Samples();
    final Samples offerTime = new Samples();
    final AtomicLong arrived = new AtomicLong();
    final long[] early = new long[1];
    final long[] earlyMaxUs = new long[1];
    final long[] unknown = new long[1];
    final long[] takeErrors = new long[1];
    long offerErrors = 0;
    final AtomicInteger consumerDone = new AtomicInteger();
    final CountDownLatch ready = new CountDownLatch(1);
    Thread consumer = start("queue-delayed-consumer", () -> {
      try {
        ready.countDown();
        while (true) {
          String v;
          try {
            v = destination.take();
          } catch (InterruptedException e) {
            break;  // every element came, or the end
          } catch (RuntimeException e) {
            ++takeErrors[0];
            continue;
          }
          final long nowUs = wallMicros();
          final int colon = v.indexOf(':');
          long index = -1;
          long dueMs = 0;
          try {
            if (colon >= 0) {
              index = Long.parseLong(v.substring(0, colon));
              dueMs = Long.parseLong(v.substring(colon + 1));
            }
          } catch (NumberFormatException e) {
            index = -1;
          }
          if (index < 0 || index >= maxElements) {
            ++unknown[0];
            continue;
          }
          final long lateUs = nowUs - dueMs * 1000;
          if (lateUs < 0) {
            ++early[0];
            earlyMaxUs[0] = Math.max(earlyMaxUs[0], -lateUs);
          }
          if (seen[(int) index]++ == 0) {
            lateness.add(lateUs * 1000);
            arrived.incrementAndGet();
          }
        }
      } finally {
        consumerDone.incrementAndGet();
      }
    });
    ready.await();

    if (probe != null) {
      probe.start();
    }
    final double cpu0 = processCpuSeconds();
    final long t0 = System.nanoTime();
    final long end = t0 + seconds(seconds);
    long i = 0;
    for (; i < maxElements; ++i) {
      final long at = t0 + i * 1_000_000_000L / DELAYED_RATE;
      if (at - end >= 0) {
        break;
      }
      final long wait = at - System.nanoTime();
      if (wait > 0) {
        sleepAtLeast(wait);
      }
      final long delay = Long.remainderUnsigned(splitmix64((long) o.rep << 32 | i),
          DELAYED_MAX_DELAY + 1);
      final long dueMs = System.currentTimeMillis() + delay;
      final long before = System.nanoTime();
      try {
        delayed.offer(i + ":" + dueMs, delay, TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        ++offerErrors;  // counted as lost too: it never comes
      }
      offerTime.add(System.nanoTime() - before);
    }
    final long offered = i;
    final long lastDue = System.nanoTime() + DELAYED_MAX_DELAY * 1_000_000L;
    // Until every element has come, or 5 s after the last one came due.
    while (arrived.get() < offered && System.nanoTime() - (lastDue + seconds(5)) < 0) {
      Thread.sleep(1);
    }
    final double window = (System.nanoTime() - t0) / 1e9;
    final double cpu = processCpuSeconds() - cpu0;
    final Probe.Window server = probe == null ? null : probe.stop();
    finish(List.of(consumer), consumerDone, System.nanoTime());

    long lost = 0;
    long duplicates = 0;
    for (int e = 0; e < offered; ++e) {
      if (seen[e] == 0) {
        ++lost;
      }
      if (seen[e] > 1) {
        duplicates += seen[e] - 1;
      }
    }
    final long leftDelayed = delayed.size();
    final long leftDestination = destination.size();
    delayed.clear();
    destination.delete();
    delayed.destroy();
    if (probe == null) {
      return null;
    }

    Result r = makeResult();
    r.set("lateness_p50_ms", lateness.percentileUs(0.50) / 1000)
        .set("lateness_p99_ms", lateness.percentileUs(0.99) / 1000)
        .set("lateness_max_ms", lateness.maxUs() / 1000)
        .set("lateness_min_ms", lateness.percentileUs(0.0) / 1000)
        .set("offered", offered)
        .set("offers_per_s", offered / seconds)
        .set("delivered", (long) lateness.count())
        .set("early", early[0])
        .set("early_max_ms", earlyMaxUs[0] / 1000.0)
        .set("lost", lost)
        .set("duplicates", duplicates)
        .set("unknown", unknown[0])
        .set("left_delayed", leftDelayed)
        .set("left_destination", leftDestination)
        .set("offer_p50_us", offerTime.percentileUs(0.50))
        .set("offer_p99_us", offerTime.percentileUs(0.99))
        .set("max_delay_ms", DELAYED_MAX_DELAY)
        .set("rate", (long) DELAYED_RATE)
        .set("errors", offerErrors + takeErrors[0]);
    addCommon(r, window, cpu, server, offered);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // semaphore: as bench/semaphore.cpp. T threads on one RSemaphore (bench:semaphore) of T/2
  // permits, set afresh (delete + trySetPermits); each loops acquire() + release() for the window,
  // holding nothing in between. pairs_per_s counts the pairs begun inside the window; wait is the
  // acquire() call, pair the acquire + release. Checks: never more than T/2 holders at once
  // (overlaps), every permit back afterwards (permits_lost). An acquire() still waiting 3 s after
  // the window is interrupted. The warm-up runs on a name of its own (bench:semaphore:warmup).

  Result semaphore(double seconds, Probe probe) throws Exception {
    final int threads = o.threads;
    final int permits = Math.max(1, threads / 2);
    final String name = probe == null ? "bench:semaphore:warmup" : "bench:semaphore";
    final RSemaphore semaphore = client.getSemaphore(name);
    semaphore.delete();
    if (!semaphore.trySetPermits(permits)) {
      throw new IllegalStateException("semaphore: trySetPermits(" + permits + ") refused");
    }
    final long maxPairsPerThread = 1_000_000;
    final Samples[] wait = new Samples[threads];
    final Samples[] pair = new Samples[threads];
    final long[] pairs = new long[threads];
    final RSemaphore[] sems = new RSemaphore[threads];
    for (int t = 0; t < threads; ++t) {
      wait[t] = new Samples();
      pair[t] = new Samples();
      sems[t] = client.getSemaphore(name);  // every thread its own object, as relock's
    }
    final AtomicInteger holders = new AtomicInteger();
    final AtomicInteger mostHolders = new AtomicInteger();
    final AtomicLong overlaps = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final Measured w = runWorkers("semaphore", seconds, probe, (me, end) -> {
      final RSemaphore sem = sems[me];
      for (long now = System.nanoTime(); pairs[me] < maxPairsPerThread && now - end < 0;
          ++pairs[me]) {
        try {
          sem.acquire();
        } catch (InterruptedException e) {
          cancelled.incrementAndGet();
          break;
        } catch (RuntimeException e) {
          errors.incrementAndGet();
          break;
        }
        final long acquired = System.nanoTime();
        wait[me].add(acquired - now);
        final int inside = holders.incrementAndGet();
        if (inside > permits) {
          overlaps.incrementAndGet();
        }
        mostHolders.accumulateAndGet(inside, Math::max);
        holders.decrementAndGet();
        try {
          sem.release();
        } catch (RuntimeException e) {
          errors.incrementAndGet();
        }
        final long after = System.nanoTime();
        pair[me].add(after - now);
        now = after;
      }
    });
    final long available = semaphore.availablePermits();
    if (w == null) {
      semaphore.delete();
      return null;
    }

    Samples waits = Samples.merged(wait);
    Samples all = Samples.merged(pair);
    long total = Arrays.stream(pairs).sum();
    Result r = makeResult();
    r.set("pairs_per_s", total / w.window())
        .set("pair_p50_us", all.percentileUs(0.50))
        .cdf("pair", all)
        .set("pair_p99_us", all.percentileUs(0.99))
        .set("pair_max_us", all.maxUs())
        .set("wait_p50_us", waits.percentileUs(0.50))
        .set("wait_p99_us", waits.percentileUs(0.99))
        .set("wait_max_us", waits.maxUs())
        .set("threads", (long) threads)
        .set("permits", (long) permits)
        .set("pairs", total)
        .set("most_holders", (long) mostHolders.get())
        .set("overlaps", overlaps.get())
        .set("permits_lost", permits - available)
        .set("cancelled", cancelled.get())
        .set("errors", errors.get());
    addCommon(r, w.window(), w.cpu(), w.server(), total);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // latch: as bench/latch.cpp. T awaiter threads and a coordinator (this thread) share the client
  // and one RCountDownLatch (bench:latch). Each round: trySetCount(1), the awaiters go, each
  // counts itself in and calls await(); once all T have, the coordinator polls PUBSUB NUMSUB on
  // redisson_countdownlatch__channel__{bench:latch} (a raw connection of its own) until the
  // server lists a subscriber (setup), idles LATCH_MARGIN more, notes the clock and calls
  // countDown(); each awaiter notes the clock as await() returns (wake). Checks: early (returned
  // before countDown), late (over 100 ms), stuck (not all back 3 s after countDown: the rounds
  // end, the awaiters are interrupted), unsubscribed (no subscriber listed within 1 s),
  // set_failed (trySetCount found the latch closed). The warm-up runs on bench:latch:warmup.

  static final long LATCH_MARGIN = TimeUnit.MILLISECONDS.toNanos(5);
  static final long LATCH_LATE = TimeUnit.MILLISECONDS.toNanos(100);
  static final long LATCH_ROUND_DEADLINE = TimeUnit.SECONDS.toNanos(3);
  static final long LATCH_SETUP_DEADLINE = TimeUnit.SECONDS.toNanos(1);
  static final long LATCH_MAX_ROUNDS = 100_000;

  Result latch(double seconds, Probe probe) throws Exception {
    final int awaiters = o.threads;
    final String name = probe == null ? "bench:latch:warmup" : "bench:latch";
    final String channel = "redisson_countdownlatch__channel__{" + name + "}";
    final RCountDownLatch coordinator = client.getCountDownLatch(name);
    coordinator.delete();
    final RCountDownLatch[] latches = new RCountDownLatch[awaiters];
    for (int t = 0; t < awaiters; ++t) {
      latches[t] = client.getCountDownLatch(name);  // every thread its own object
    }
    final ReentrantLock m = new ReentrantLock();
    final Condition roundChanged = m.newCondition();
    final Condition counted = m.newCondition();
    final long[] round = {0};  // under m: the round the awaiters may start; -1: stop
    final long[] called = {0};  // under m
    final long[] returned = {0};  // under m
    final AtomicLongArray returnedAt = new AtomicLongArray(awaiters);
    final AtomicLong errors = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < awaiters; ++t) {
      final int me = t;
      threads.add(start("latch-awaiter-" + me, () -> {
        for (long r = 1; ; ++r) {
          m.lock();
          try {
            while (round[0] >= 0 && round[0] < r) {
              roundChanged.await();
            }
            if (round[0] < 0) {
              return;
            }
            if (++called[0] == awaiters * r) {
              counted.signalAll();
            }
          } catch (InterruptedException e) {
            return;
          } finally {
            m.unlock();
          }
          boolean gone = false;
          try {
            latches[me].await();
          } catch (InterruptedException e) {
            cancelled.incrementAndGet();
            gone = true;
          } catch (RuntimeException e) {
            errors.incrementAndGet();
          }
          returnedAt.set(me, System.nanoTime());
          m.lock();
          try {
            if (++returned[0] == awaiters * r) {
              counted.signalAll();
            }
          } finally {
            m.unlock();
          }
          if (gone) {
            return;
          }
        }
      }));
    }

    final Samples wake = new Samples();
    final Samples allOpen = new Samples();
    final Samples openCall = new Samples();
    final Samples setup = new Samples();
    long rounds = 0;
    long early = 0;
    long late = 0;
    long stuck = 0;
    long unsubscribed = 0;
    long setFailed = 0;
    long polls = 0;
    Probe.Window server = null;
    double window;
    double cpu;
    try (Probe watch = new Probe(o.url)) {
      if (probe != null) {
        probe.start();
      }
      final double cpu0 = processCpuSeconds();
      final long t0 = System.nanoTime();
      final long end = t0 + seconds(seconds);
      for (long r = 1; r <= LATCH_MAX_ROUNDS && System.nanoTime() - end < 0; ++r) {
        if (!coordinator.trySetCount(1)) {
          ++setFailed;
        }
        m.lock();
        try {
          round[0] = r;
          roundChanged.signalAll();
          long left = LATCH_ROUND_DEADLINE;
          while (called[0] < awaiters * r && left > 0) {
            left = counted.awaitNanos(left);
          }
          if (called[0] < awaiters * r) {
            ++stuck;
            break;
          }
        } finally {
          m.unlock();
        }
        final long allCalled = System.nanoTime();
        boolean seen = false;
        while (System.nanoTime() - (allCalled + LATCH_SETUP_DEADLINE) < 0) {
          ++polls;
          if (seen = watch.numsub(channel) >= 1) {
            break;
          }
        }
        if (seen) {
          setup.add(System.nanoTime() - allCalled);
        } else {
          ++unsubscribed;
        }
        sleepAtLeast(LATCH_MARGIN);
        final long opened = System.nanoTime();
        coordinator.countDown();
        openCall.add(System.nanoTime() - opened);
        m.lock();
        try {
          long left = opened + LATCH_ROUND_DEADLINE - System.nanoTime();
          while (returned[0] < awaiters * r && left > 0) {
            left = counted.awaitNanos(left);
          }
          if (returned[0] < awaiters * r) {
            ++stuck;
            break;
          }
        } finally {
          m.unlock();
        }
        ++rounds;
        long last = 0;
        for (int t = 0; t < awaiters; ++t) {
          final long d = returnedAt.get(t) - opened;
          if (d < 0) {
            ++early;
            continue;
          }
          wake.add(d);
          if (d > LATCH_LATE) {
            ++late;
          }
          last = Math.max(last, d);
        }
        allOpen.add(last);
      }
      window = (System.nanoTime() - t0) / 1e9;
      cpu = processCpuSeconds() - cpu0;
      if (probe != null) {
        server = probe.stop();
      }
    } finally {
      m.lock();
      try {
        round[0] = -1;
        roundChanged.signalAll();
      } finally {
        m.unlock();
      }
      if (stuck > 0) {
        for (Thread t : threads) {
          t.interrupt();
        }
      }
      for (Thread t : threads) {
        t.join();
      }
    }
    coordinator.delete();
    if (probe == null) {
      return null;
    }

    Result r = makeResult();
    r.set("wake_p50_us", wake.percentileUs(0.50))
        .set("wake_p99_us", wake.percentileUs(0.99))
        .set("wake_max_us", wake.maxUs())
        .set("all_open_p50_us", allOpen.percentileUs(0.50))
        .set("all_open_p99_us", allOpen.percentileUs(0.99))
        .set("open_call_p50_us", openCall.percentileUs(0.50))
        .set("open_call_p99_us", openCall.percentileUs(0.99))
        .set("setup_p50_us", setup.percentileUs(0.50))
        .set("setup_p99_us", setup.percentileUs(0.99))
        .set("setup_max_us", setup.maxUs())
        .set("margin_us", LATCH_MARGIN / 1000)
        .set("awaiters", (long) awaiters)
        .set("rounds", rounds)
        .set("wakeups", (long) wake.count())
        .set("early", early)
        .set("late", late)
        .set("stuck", stuck)
        .set("unsubscribed", unsubscribed)
        .set("set_failed", setFailed)
        .set("numsub_polls", polls)
        .set("cancelled", cancelled.get())
        .set("errors", errors.get())
        .set("lib_calls_per_round", rounds > 0 ? (double) (server.calls() - polls) / rounds
            : Double.NaN);
    addCommon(r, window, cpu, server, rounds);
    return r;
  }

  // ------------------------------------------------------------------------------------------
  // Start-up

  static String redissonVersion() {
    try (InputStream in = Redisson.class.getResourceAsStream(
        "/META-INF/maven/org.redisson/redisson/pom.properties")) {
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
    return "unknown";
  }

  /**
   * Redisson's defaults for a single server (redis://) or a cluster
   * (redis-cluster://[user:pass@]h1:p1,h2:p2..., relock's form: useClusterServers() with every
   * node named as a seed); only the addresses (and credentials) are set. A master with replicas
   * is redis://[user:pass@]host:port?replicas=host:port[,host:port...] (the bench's own
   * convention): useMasterSlaveServers() with that master and those slaves, and ReadMode.MASTER
   * (Redisson's default reads replicas, which lag behind; the lock calls are writes, which go to
   * the master in any mode, and in 4.x the WAIT after them does not depend on the read mode);
   * everything else Redisson's default, so its lock sync (checkLockSyncedSlaves, WAIT n after
   * every lock write, slavesSyncTimeout 1000 ms) applies. Other query options (relock's) are
   * ignored.
   */
  static Config buildConfig(String url) {
    final String clusterScheme = "redis-cluster://";
    if (url.startsWith(clusterScheme)) {
      String rest = url.substring(clusterScheme.length());
      int q = rest.indexOf('?');
      if (q >= 0) {
        rest = rest.substring(0, q);  // relock's ?pubsub=MODE: Redisson has its own default
      }
      Config config = new Config();
      ClusterServersConfig cc = config.useClusterServers();
      int at = rest.lastIndexOf('@');
      if (at >= 0) {
        credentials(cc, rest.substring(0, at));
        rest = rest.substring(at + 1);
      }
      for (String node : rest.split(",")) {
        if (node.isEmpty()) {
          throw new UsageException("empty node in " + url);
        }
        cc.addNodeAddress("redis://" + (node.contains(":") ? node : node + ":6379"));
      }
      return config;
    }
    URI uri = URI.create(url);
    String scheme = uri.getScheme() == null ? "redis" : uri.getScheme();
    if (!scheme.equals("redis") && !scheme.equals("rediss")) {
      throw new UsageException("unsupported URL scheme " + scheme);
    }
    if (uri.getHost() == null) {
      throw new UsageException("URL needs a host: " + url);
    }
    int port = uri.getPort() > 0 ? uri.getPort() : 6379;
    List<String> replicas = replicas(uri.getRawQuery());
    if (!replicas.isEmpty()) {
      Config config = new Config();
      MasterSlaveServersConfig ms = config.useMasterSlaveServers();
      ms.setMasterAddress(scheme + "://" + uri.getHost() + ":" + port);
      for (String replica : replicas) {
        ms.addSlaveAddress(scheme + "://" + (replica.contains(":") ? replica : replica + ":6379"));
      }
      ms.setReadMode(ReadMode.MASTER);
      String userInfo = uri.getRawUserInfo();
      if (userInfo != null && !userInfo.isEmpty()) {
        credentials(ms, userInfo);
      }
      String path = uri.getPath();
      if (path != null && path.length() > 1) {
        ms.setDatabase(Integer.parseInt(path.substring(1)));
      }
      return config;
    }
    Config config = new Config();
    tlsOptions(config, uri.getRawQuery());
    SingleServerConfig sc = config.useSingleServer();
    sc.setAddress(scheme + "://" + uri.getHost() + ":" + port);
    String userInfo = uri.getRawUserInfo();
    if (userInfo != null && !userInfo.isEmpty()) {
      credentials(sc, userInfo);
    }
    String path = uri.getPath();
    if (path != null && path.length() > 1) {
      sc.setDatabase(Integer.parseInt(path.substring(1)));
    }
    return config;
  }

  /**
   * relock's ?tls_ca=FILE (percent-encoded path of a PEM bundle) onto a rediss:// single server:
   * Redisson trusts the certificates in it and nothing else (Config.setSslTrustManagerFactory,
   * built here from the PEM, so both drivers take the same URL); the host name is checked as
   * Redisson does by default (SslVerificationMode.STRICT). relock's client-certificate options
   * are refused (the bench does not use them); its other query options are ignored.
   */
  static void tlsOptions(Config config, String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return;
    }
    for (String option : rawQuery.split("&")) {
      int eq = option.indexOf('=');
      String name = eq < 0 ? option : option.substring(0, eq);
      String value =
          eq < 0 ? "" : URLDecoder.decode(option.substring(eq + 1), StandardCharsets.UTF_8);
      if (name.equals("tls_cert") || name.equals("tls_key")) {
        throw new UsageException(name + ": the Redisson peer takes no client certificate");
      }
      if (!name.equals("tls_ca")) {
        continue;
      }
      try {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        int i = 0;
        try (InputStream in = Files.newInputStream(Path.of(value))) {
          for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
            trusted.setCertificateEntry("ca-" + i++, c);
          }
        }
        if (i == 0) {
          throw new UsageException("tls_ca=" + value + ": no certificate in it");
        }
        TrustManagerFactory tmf =
            TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        config.setSslTrustManagerFactory(tmf);
      } catch (IOException | GeneralSecurityException e) {
        throw new UsageException("tls_ca=" + value + ": " + e);
      }
    }
  }

  /** The host:port list of a query's replicas=h1:p1,h2:p2 (empty without one). */
  static List<String> replicas(String rawQuery) {
    List<String> out = new ArrayList<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return out;
    }
    for (String option : rawQuery.split("&")) {
      int eq = option.indexOf('=');
      String name = eq < 0 ? option : option.substring(0, eq);
      if (!name.equals("replicas")) {
        continue;
      }
      String value =
          eq < 0 ? "" : URLDecoder.decode(option.substring(eq + 1), StandardCharsets.UTF_8);
      for (String node : value.split(",", -1)) {
        if (node.isEmpty()) {
          throw new UsageException("empty node in replicas=" + value);
        }
        out.add(node);
      }
    }
    return out;
  }

  /** True for useMasterSlaveServers() (buildConfig's ?replicas= form). */
  static boolean isMasterSlave(Config c) {
    return !c.isClusterConfig() && !c.isSingleConfig() && !c.isSentinelConfig();
  }

  /** user:password (URL-encoded; either part may be empty) onto a server config. */
  static void credentials(BaseConfig<?> sc, String userInfo) {
    int colon = userInfo.indexOf(':');
    String user = colon >= 0 ? userInfo.substring(0, colon) : "";
    String pass = colon >= 0 ? userInfo.substring(colon + 1) : userInfo;
    if (!user.isEmpty()) {
      sc.setUsername(URLDecoder.decode(user, StandardCharsets.UTF_8));
    }
    if (!pass.isEmpty()) {
      sc.setPassword(URLDecoder.decode(pass, StandardCharsets.UTF_8));
    }
  }

  /**
   * The variant: "4.7.0 codec=Kryo5Codec pool=64/24 sub=50/1" (version, codec, pool sizes; in a
   * cluster the pool is each master's), with " cluster" after the version in a cluster and
   * " master-slave" (the pool is the master's) with replicas.
   */
  static String variant(RedissonClient client, String version) {
    Config c = client.getConfig();
    String codec = c.getCodec() == null ? "default" : c.getCodec().getClass().getSimpleName();
    if (c.isClusterConfig() || isMasterSlave(c)) {
      // The client's own, as used.
      BaseMasterSlaveServersConfig<?> cc =
          c.isClusterConfig() ? c.useClusterServers() : c.useMasterSlaveServers();
      return version + (c.isClusterConfig() ? " cluster" : " master-slave") + " codec=" + codec
          + " pool=" + cc.getMasterConnectionPoolSize() + "/"
          + cc.getMasterConnectionMinimumIdleSize()
          + " sub=" + cc.getSubscriptionConnectionPoolSize() + "/"
          + cc.getSubscriptionConnectionMinimumIdleSize();
    }
    SingleServerConfig sc = c.useSingleServer();  // the client's own, as used
    return version + " codec=" + codec
        + " pool=" + sc.getConnectionPoolSize() + "/" + sc.getConnectionMinimumIdleSize()
        + " sub=" + sc.getSubscriptionConnectionPoolSize() + "/"
        + sc.getSubscriptionConnectionMinimumIdleSize();
  }

  /** Every setting that bears on the figures, for the "settings" field. */
  static String settings(RedissonClient client, String version) {
    Config c = client.getConfig();
    BaseConfig<?> base = c.isClusterConfig() ? c.useClusterServers()
        : isMasterSlave(c) ? c.useMasterSlaveServers() : c.useSingleServer();
    String cluster = "";
    if (isMasterSlave(c)) {
      MasterSlaveServersConfig ms = c.useMasterSlaveServers();
      cluster = " slaves=" + ms.getSlaveAddresses().size() + " read=" + ms.getReadMode()
          + " lock_synced_slaves=" + (c.isCheckLockSyncedSlaves() ? "on" : "off")
          + " slaves_sync_timeout=" + c.getSlavesSyncTimeout() + "ms";
    }
    if (c.isClusterConfig()) {
      ClusterServersConfig cc = c.useClusterServers();
      cluster = " seeds=" + cc.getNodeAddresses().size() + " read=" + cc.getReadMode()
          + " sharded_subscription=" + cc.getShardedSubscriptionMode()
          + " scan=" + cc.getScanInterval() + "ms";
    }
    return variant(client, version)
        + " subs_per_conn=" + base.getSubscriptionsPerConnection()
        + " netty_threads=" + c.getNettyThreads() + " threads=" + c.getThreads()
        + " script_cache=" + (c.isUseScriptCache() ? "on" : "off")
        + " protocol=" + c.getProtocol()
        + " timeout=" + base.getTimeout() + "ms"
        + " watchdog=" + c.getLockWatchdogTimeout() + "ms"
        + " fair_lock_wait=" + c.getFairLockWaitTimeout() + "ms" + cluster;
  }

  /** multi-3's --url: one URL, or 3 plain redis:// URLs separated by commas. */
  static List<String> multiUrls(String url) {
    List<String> urls = List.of(url.split(",", -1));
    if (urls.size() != 1 && urls.size() != MULTI_MEMBERS) {
      throw new UsageException("multi-3: --url takes one URL or 3 separated by commas");
    }
    for (String u : urls) {
      if (u.isEmpty() || u.startsWith("redis-cluster://")) {
        throw new UsageException("multi-3: plain redis:// URLs only, got '" + u + "'");
      }
    }
    return urls;
  }

  /** The probe's form of several servers: redis-cluster://h1:p1,h2:p2,... (it sums over them). */
  static String probeUrl(List<String> urls) {
    StringBuilder b = new StringBuilder("redis-cluster://");
    for (String u : urls) {
      URI uri = URI.create(u);
      if (b.length() > "redis-cluster://".length()) {
        b.append(',');
      }
      b.append(uri.getHost()).append(':').append(uri.getPort() > 0 ? uri.getPort() : 6379);
    }
    return b.toString();
  }

  static Options parse(String[] argv) {
    Options o = new Options();
    for (int i = 0; i < argv.length; i++) {
      String flag = argv[i];
      if (flag.equals("--help") || flag.equals("-h")) {
        throw new UsageException(null);
      }
      if (i + 1 >= argv.length) {
        throw new UsageException("missing value for " + flag);
      }
      String value = argv[++i];
      try {
        switch (flag) {
          case "--scenario" -> o.scenario = value;
          case "--rep" -> o.rep = Integer.parseInt(value);
          case "--url" -> o.url = value;
          case "--seconds" -> o.seconds = Double.parseDouble(value);
          case "--threads" -> o.threads = Integer.parseInt(value);
          case "--locks" -> o.locks = Integer.parseInt(value);
          case "--warmup" -> o.warmup = Double.parseDouble(value);
          case "--variant" -> o.variant = value;
          case "--probe-url" -> o.probeUrl = value;
          default -> throw new UsageException("unknown option " + flag);
        }
      } catch (NumberFormatException e) {
        throw new UsageException("bad value for " + flag + ": " + value);
      }
    }
    if (o.scenario == null
        || !List.of("uncontended", "n-locks", "one-lock", "handoff", "rw-read", "rw-mixed",
            "cluster-n-locks", "fair-handoff", "fenced-uncontended", "multi-3", "queue",
            "queue-delayed", "semaphore", "latch")
            .contains(o.scenario)) {
      throw new UsageException("many-held".equals(o.scenario)
          ? "many-held is relock's own scenario; the Redisson peer runs uncontended, n-locks,"
              + " one-lock, handoff, rw-read, rw-mixed, cluster-n-locks, fair-handoff,"
              + " fenced-uncontended, multi-3, queue, queue-delayed, semaphore and latch"
          : "unknown scenario '" + o.scenario + "'");
    }
    if (!(o.seconds > 0 && o.seconds <= 600) || o.threads < 1 || o.threads > 256 || o.locks < 1
        || !(o.warmup >= 0 && o.warmup <= 600)) {
      throw new UsageException("--seconds must be in (0, 600], --threads in [1, 256],"
          + " --locks >= 1, --warmup in [0, 600]");
    }
    return o;
  }

  public static void main(String[] argv) {
    // The real stdout carries the result line only; anything else goes to stderr.
    PrintStream stdout =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);

    Options o;
    try {
      o = parse(argv);
    } catch (UsageException e) {
      if (e.getMessage() != null) {
        System.err.println("relock-bench-redisson: " + e.getMessage());
      }
      System.err.println(USAGE);
      System.exit(2);
      return;
    }

    RedissonClient client = null;
    List<RedissonClient> more = new ArrayList<>();  // multi-3 on several servers
    int code = 0;
    try {
      // multi-3 takes one URL or several, comma-separated: one client per server.
      List<String> urls = o.scenario.equals("multi-3") ? multiUrls(o.url) : List.of(o.url);
      client = Redisson.create(buildConfig(urls.get(0)));
      for (String url : urls.subList(1, urls.size())) {
        more.add(Redisson.create(buildConfig(url)));
      }
      String version = redissonVersion();
      String variant = o.variant != null ? o.variant : variant(client, version);
      RedissonBench bench = new RedissonBench(o, client, variant, settings(client, version));
      List<RedissonClient> all = new ArrayList<>(List.of(client));
      all.addAll(more);
      bench.serverClients = all;
      Scenario scenario = switch (o.scenario) {
        case "uncontended" -> bench::uncontended;
        case "n-locks", "cluster-n-locks" -> bench::nLocks;
        case "one-lock" -> bench::oneLock;
        case "handoff" -> bench::handoff;
        case "rw-read" -> bench::rwRead;
        case "rw-mixed" -> bench::rwMixed;
        case "fair-handoff" -> bench::fairHandoff;
        case "fenced-uncontended" -> bench::fencedUncontended;
        case "multi-3" -> bench::multi3;
        case "queue" -> bench::queue;
        case "queue-delayed" -> bench::queueDelayed;
        case "semaphore" -> bench::semaphore;
        case "latch" -> bench::latch;
        default -> throw new IllegalStateException(o.scenario);
      };
      try (Probe probe = new Probe(o.probeUrl != null ? o.probeUrl
          : urls.size() == 1 ? o.url : probeUrl(urls))) {
        if (o.warmup > 0) {
          scenario.run(o.warmup, null);  // JVM warm-up: same scenario, figures thrown away
        }
        Result r = scenario.run(o.seconds, probe);
        stdout.print(r.json());
        stdout.print('\n');
        stdout.flush();
      }
    } catch (Throwable e) {
      System.err.println("relock-bench-redisson: " + o.scenario + ": " + e);
      code = 1;
    } finally {
      more.add(0, client);
      for (RedissonClient c : more) {
        if (c != null) {
          try {
            c.shutdown(0, 2, TimeUnit.SECONDS);
          } catch (Throwable ignored) {
            // exiting anyway
          }
        }
      }
    }
    System.exit(code);
  }
}
