// SPDX-License-Identifier: Apache-2.0
package dev.relock.interop;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.redisson.api.RCountDownLatch;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * The driver's commands for Redisson's synchronizers: RSemaphore (s*), RPermitExpirableSemaphore
 * (p*) and RCountDownLatch (l*). See tests/interop/README.md for the table.
 *
 * <pre>
 *   strysetpermits NAME N          trySetPermits(N) -> boolean
 *   saddpermits NAME N             addPermits(N) (N may be negative) -> true
 *   sacquire NAME [N]              acquire(N) (waits as long as it takes) -> true
 *   stryacquire NAME N [WAIT_MS]   tryAcquire(N) or tryAcquire(N, WAIT_MS, ms) -> boolean
 *   sacquireasync NAME N [WAIT_MS] acquireAsync(N) -> true, or tryAcquireAsync(N, WAIT_MS, ms)
 *                                  -> boolean; answered when it completes (deferred)
 *   srelease NAME [N]              release(N) -> true
 *   savailable NAME                availablePermits()
 *   sdrain NAME                    drainPermits()
 *
 *   ptrysetpermits NAME N          trySetPermits(N) -> boolean
 *   paddpermits NAME N             addPermits(N) -> true
 *   psetpermits NAME N             setPermits(N) (4.x only) -> true
 *   pacquire NAME [LEASE_MS]       acquire() or acquire(LEASE_MS, ms) -> the permit id
 *   ptryacquire NAME WAIT_MS [LEASE_MS]
 *                                  tryAcquire(WAIT_MS, ms) or tryAcquire(WAIT_MS, LEASE_MS, ms)
 *                                  -> the permit id, or null
 *   pacquireasync NAME [LEASE_MS]  acquireAsync(...) -> the permit id (deferred)
 *   prelease NAME ID               release(ID) -> true (or the exception)
 *   ptryrelease NAME ID            tryRelease(ID) -> boolean
 *   pupdatelease NAME ID LEASE_MS  updateLeaseTime(ID, LEASE_MS, ms) -> boolean
 *   pavailable NAME                availablePermits()
 *   pacquired NAME                 acquiredPermits() (4.x only)
 *   pleasetime NAME ID             getLeaseTime(ID) (4.x only)
 *
 *   ltrysetcount NAME N            trySetCount(N) -> boolean
 *   lcountdown NAME                countDown() -> true
 *   lcount NAME                    getCount()
 *   lawait NAME [WAIT_MS]          await() -> true, or await(WAIT_MS, ms) -> boolean
 *   lawaitasync NAME [WAIT_MS]     awaitAsync() -> true, or awaitAsync(WAIT_MS, ms) -> boolean;
 *                                  answered when it completes (deferred)
 *   ldelete NAME                   delete() -> boolean
 * </pre>
 *
 * A deferred command (the *async ones) leaves its owner's thread free at once: one owner can
 * have several waiting, and its later commands run meanwhile. Its reply's end_ns is taken when
 * Redisson completes it (on a Redisson thread).
 *
 * Methods that exist in 4.x only are reached by reflection; on 3.18.1 they answer ok:false with
 * UnsupportedException.
 */
final class Synchronizers {

  private Synchronizers() {}

  static void register(Map<String, Driver.Handler> handlers, RedissonClient redisson,
      String version) {
    // --- RSemaphore ---
    handlers.put("strysetpermits", a -> {
      Driver.need(a, 2, 2, "strysetpermits NAME N");
      return semaphore(redisson, a[0]).trySetPermits(permits(a[1], "N"));
    });
    handlers.put("saddpermits", a -> {
      Driver.need(a, 2, 2, "saddpermits NAME N");
      semaphore(redisson, a[0]).addPermits(permits(a[1], "N"));
      return Boolean.TRUE;
    });
    handlers.put("sacquire", a -> {
      Driver.need(a, 1, 2, "sacquire NAME [N]");
      semaphore(redisson, a[0]).acquire(a.length == 2 ? positive(a[1], "N") : 1);
      return Boolean.TRUE;
    });
    handlers.put("stryacquire", a -> {
      Driver.need(a, 2, 3, "stryacquire NAME N [WAIT_MS]");
      RSemaphore s = semaphore(redisson, a[0]);
      int n = positive(a[1], "N");
      if (a.length == 3) {
        return s.tryAcquire(n, Driver.count(a[2], "WAIT_MS"), TimeUnit.MILLISECONDS);
      }
      return s.tryAcquire(n);
    });
    handlers.put("sacquireasync", a -> {
      Driver.need(a, 2, 3, "sacquireasync NAME N [WAIT_MS]");
      RSemaphore s = semaphore(redisson, a[0]);
      int n = positive(a[1], "N");
      if (a.length == 3) {
        return new Driver.Deferred(
            s.tryAcquireAsync(n, Driver.count(a[2], "WAIT_MS"), TimeUnit.MILLISECONDS));
      }
      return new Driver.Deferred(s.acquireAsync(n).thenApply(v -> Boolean.TRUE));
    });
    handlers.put("srelease", a -> {
      Driver.need(a, 1, 2, "srelease NAME [N]");
      semaphore(redisson, a[0]).release(a.length == 2 ? positive(a[1], "N") : 1);
      return Boolean.TRUE;
    });
    handlers.put("savailable", a -> {
      Driver.need(a, 1, 1, "savailable NAME");
      return semaphore(redisson, a[0]).availablePermits();
    });
    handlers.put("sdrain", a -> {
      Driver.need(a, 1, 1, "sdrain NAME");
      return semaphore(redisson, a[0]).drainPermits();
    });

    // --- RPermitExpirableSemaphore ---
    handlers.put("ptrysetpermits", a -> {
      Driver.need(a, 2, 2, "ptrysetpermits NAME N");
      return permitSemaphore(redisson, a[0]).trySetPermits(permits(a[1], "N"));
    });
    handlers.put("paddpermits", a -> {
      Driver.need(a, 2, 2, "paddpermits NAME N");
      permitSemaphore(redisson, a[0]).addPermits(permits(a[1], "N"));
      return Boolean.TRUE;
    });
    handlers.put("psetpermits", a -> {
      Driver.need(a, 2, 2, "psetpermits NAME N");
      invoke(permitSemaphore(redisson, a[0]), version, "setPermits", new Class<?>[] {int.class},
          permits(a[1], "N"));
      return Boolean.TRUE;
    });
    handlers.put("pacquire", a -> {
      Driver.need(a, 1, 2, "pacquire NAME [LEASE_MS]");
      RPermitExpirableSemaphore s = permitSemaphore(redisson, a[0]);
      if (a.length == 2) {
        return s.acquire(Driver.count(a[1], "LEASE_MS"), TimeUnit.MILLISECONDS);
      }
      return s.acquire();
    });
    handlers.put("ptryacquire", a -> {
      Driver.need(a, 2, 3, "ptryacquire NAME WAIT_MS [LEASE_MS]");
      RPermitExpirableSemaphore s = permitSemaphore(redisson, a[0]);
      long wait = Driver.count(a[1], "WAIT_MS");
      if (a.length == 3) {
        return s.tryAcquire(wait, Driver.count(a[2], "LEASE_MS"), TimeUnit.MILLISECONDS);
      }
      return s.tryAcquire(wait, TimeUnit.MILLISECONDS);
    });
    handlers.put("pacquireasync", a -> {
      Driver.need(a, 1, 2, "pacquireasync NAME [LEASE_MS]");
      RPermitExpirableSemaphore s = permitSemaphore(redisson, a[0]);
      if (a.length == 2) {
        return new Driver.Deferred(
            s.acquireAsync(Driver.count(a[1], "LEASE_MS"), TimeUnit.MILLISECONDS));
      }
      return new Driver.Deferred(s.acquireAsync());
    });
    handlers.put("prelease", a -> {
      Driver.need(a, 2, 2, "prelease NAME ID");
      permitSemaphore(redisson, a[0]).release(a[1]);
      return Boolean.TRUE;
    });
    handlers.put("ptryrelease", a -> {
      Driver.need(a, 2, 2, "ptryrelease NAME ID");
      return permitSemaphore(redisson, a[0]).tryRelease(a[1]);
    });
    handlers.put("pupdatelease", a -> {
      Driver.need(a, 3, 3, "pupdatelease NAME ID LEASE_MS");
      return permitSemaphore(redisson, a[0]).updateLeaseTime(a[1],
          Driver.count(a[2], "LEASE_MS"), TimeUnit.MILLISECONDS);
    });
    handlers.put("pavailable", a -> {
      Driver.need(a, 1, 1, "pavailable NAME");
      return permitSemaphore(redisson, a[0]).availablePermits();
    });
    handlers.put("pacquired", a -> {
      Driver.need(a, 1, 1, "pacquired NAME");
      return invoke(permitSemaphore(redisson, a[0]), version, "acquiredPermits", new Class<?>[] {});
    });
    handlers.put("pleasetime", a -> {
      Driver.need(a, 2, 2, "pleasetime NAME ID");
      return invoke(permitSemaphore(redisson, a[0]), version, "getLeaseTime",
          new Class<?>[] {String.class}, a[1]);
    });

    // --- RCountDownLatch ---
    handlers.put("ltrysetcount", a -> {
      Driver.need(a, 2, 2, "ltrysetcount NAME N");
      return latch(redisson, a[0]).trySetCount(Driver.millis(a[1], "N"));
    });
    handlers.put("lcountdown", a -> {
      Driver.need(a, 1, 1, "lcountdown NAME");
      latch(redisson, a[0]).countDown();
      return Boolean.TRUE;
    });
    handlers.put("lcount", a -> {
      Driver.need(a, 1, 1, "lcount NAME");
      return latch(redisson, a[0]).getCount();
    });
    handlers.put("lawait", a -> {
      Driver.need(a, 1, 2, "lawait NAME [WAIT_MS]");
      RCountDownLatch l = latch(redisson, a[0]);
      if (a.length == 2) {
        return l.await(Driver.count(a[1], "WAIT_MS"), TimeUnit.MILLISECONDS);
      }
      l.await();
      return Boolean.TRUE;
    });
    handlers.put("lawaitasync", a -> {
      Driver.need(a, 1, 2, "lawaitasync NAME [WAIT_MS]");
      RCountDownLatch l = latch(redisson, a[0]);
      if (a.length == 2) {
        return new Driver.Deferred(
            l.awaitAsync(Driver.count(a[1], "WAIT_MS"), TimeUnit.MILLISECONDS));
      }
      return new Driver.Deferred(l.awaitAsync().thenApply(v -> Boolean.TRUE));
    });
    handlers.put("ldelete", a -> {
      Driver.need(a, 1, 1, "ldelete NAME");
      return latch(redisson, a[0]).delete();
    });
  }

  private static String name(String name) {
    if (name.isEmpty()) {
      throw new Driver.UsageException("empty name");
    }
    return name;
  }

  private static RSemaphore semaphore(RedissonClient redisson, String name) {
    return redisson.getSemaphore(name(name));
  }

  private static RPermitExpirableSemaphore permitSemaphore(RedissonClient redisson, String name) {
    return redisson.getPermitExpirableSemaphore(name(name));
  }

  private static RCountDownLatch latch(RedissonClient redisson, String name) {
    return redisson.getCountDownLatch(name(name));
  }

  /** An int argument (any sign: addPermits takes negative ones). */
  private static int permits(String text, String what) {
    long v = Driver.millis(text, what);
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      throw new Driver.UsageException(what + " must fit an int, got " + v);
    }
    return (int) v;
  }

  private static int positive(String text, String what) {
    int v = permits(text, what);
    if (v < 1) {
      throw new Driver.UsageException(what + " must be >= 1, got " + v);
    }
    return v;
  }

  /** `target.method(args)` by reflection, for methods one Redisson version lacks. */
  private static Object invoke(RPermitExpirableSemaphore target, String version, String method,
      Class<?>[] types, Object... args) {
    Method m;
    try {
      m = RPermitExpirableSemaphore.class.getMethod(method, types);
    } catch (NoSuchMethodException e) {
      throw new Driver.UnsupportedException("unsupported: RPermitExpirableSemaphore." + method
          + " does not exist in Redisson " + version);
    }
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw Driver.sneaky(e.getCause());
    } catch (IllegalAccessException e) {
      throw new Driver.UnsupportedException("unsupported: " + e);
    }
  }
}
