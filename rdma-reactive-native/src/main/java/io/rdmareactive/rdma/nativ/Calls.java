package io.rdmareactive.rdma.nativ;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.jspecify.annotations.Nullable;

/**
 * Slow-path invocation helpers (create, destroy, query): errno-capturing handles get this
 * thread's call-state segment inserted, NULL or non-zero results become typed exceptions. The
 * hot paths (post, poll) call their handles with invokeExact instead.
 */
final class Calls {
  private Calls() {}

  /** Calls an errno-capturing symbol handle returning a pointer; NULL throws with the captured errno. */
  static MemorySegment create(String function, MethodHandle h, Object... args) {
    MemorySegment p = (MemorySegment) invoke(h, withState(null, args));
    if (p.address() == 0) {
      throw Native.failure(function, errnoOr(io.rdmareactive.rdma.NativeCallException.EIO));
    }
    return p;
  }

  /** Calls an errno-capturing function-pointer handle returning a pointer; NULL throws. */
  static MemorySegment createVia(String function, MethodHandle h, MemorySegment fn, Object... args) {
    MemorySegment p = (MemorySegment) invoke(h, withState(fn, args));
    if (p.address() == 0) {
      throw Native.failure(function, errnoOr(io.rdmareactive.rdma.NativeCallException.EIO));
    }
    return p;
  }

  /** Calls an errno-capturing symbol handle returning int: 0 or the errno (positive, or -1 with errno). */
  static int status(MethodHandle h, Object... args) {
    return (int) invoke(h, withState(null, args));
  }

  /** Like {@link #status} through a function pointer. */
  static int statusVia(MethodHandle h, MemorySegment fn, Object... args) {
    return (int) invoke(h, withState(fn, args));
  }

  /** Throws when {@code rc} (from {@link #status}) reports a failure. */
  static void check(String function, int rc) {
    Native.checkReturn(function, rc);
  }

  /** The errno a failed status call reported (0 when it succeeded). */
  static int errnoOf(int rc) {
    return rc == 0 ? 0 : rc < 0 ? errnoOr(-rc) : rc;
  }

  /** Calls a handle without call state. */
  static Object plain(MethodHandle h, Object... args) {
    return invoke(h, args);
  }

  private static int errnoOr(int fallback) {
    int e = Native.lastErrno();
    return e != 0 ? e : fallback;
  }

  private static Object[] withState(@Nullable MemorySegment fn, Object[] args) {
    int lead = fn == null ? 1 : 2;
    Object[] all = new Object[args.length + lead];
    if (fn != null) {
      all[0] = fn;
    }
    all[lead - 1] = Native.callState();
    System.arraycopy(args, 0, all, lead, args.length);
    return all;
  }

  private static Object invoke(MethodHandle h, Object[] args) {
    try {
      return h.invokeWithArguments(args);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

}
