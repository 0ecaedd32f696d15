package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.NativeCallException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * FFM plumbing shared by the bindings: library lookup with a clear error, downcalls with errno
 * capture, errno text. libibverbs reports errors two ways: NULL/-1 with errno set (create and
 * alloc calls), or the errno value as the return (destroy, modify and post calls).
 */
final class Native {
  static final Linker LINKER = Linker.nativeLinker();
  static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
  static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
  static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
  private static final ThreadLocal<MemorySegment> CALL_STATE_SEGMENT =
      ThreadLocal.withInitial(() -> Arena.global().allocate(CALL_STATE));


  private Native() {}

  /** Loads {@code soname} or throws {@link NativeLibraryUnavailableException}. */
  static SymbolLookup load(String soname) {
    try {
      return SymbolLookup.libraryLookup(soname, Arena.global());
    } catch (IllegalArgumentException e) {
      throw new NativeLibraryUnavailableException(soname, e);
    }
  }

  /** A downcall to {@code name} in {@code lib}; with {@code errno}, the handle takes the call-state segment first. */
  static MethodHandle downcall(SymbolLookup lib, String name, FunctionDescriptor fd, boolean errno) {
    MemorySegment symbol = lib.find(name).orElseThrow(() -> new NativeLibraryUnavailableException(
        "symbol " + name, null));
    return errno ? LINKER.downcallHandle(symbol, fd, CAPTURE_ERRNO) : LINKER.downcallHandle(symbol, fd);
  }

  /** A handle for calling a function pointer (first argument: the pointer), e.g. an ops-table entry. */
  static MethodHandle pointerCall(FunctionDescriptor fd, Linker.Option... options) {
    return LINKER.downcallHandle(fd, options);
  }

  /** This thread's call-state segment to pass to errno-capturing handles. */
  static MemorySegment callState() {
    return CALL_STATE_SEGMENT.get();
  }

  /** The errno captured in this thread's call-state segment by the last capturing call. */
  static int lastErrno() {
    return (int) ERRNO.get(callState(), 0L);
  }

  /** strerror text for {@code errno}. */
  static String strerror(int errno) {
    return Libc.strerror(errno);
  }

  /** The typed exception for {@code function} failing with {@code errno}. */
  static NativeCallException failure(String function, int errno) {
    return NativeCallException.of(function, errno, strerror(errno));
  }

  /** The typed exception for {@code function} failing with {@code errno}, with what was wrong. */
  static NativeCallException failure(String function, int errno, String detail) {
    return NativeCallException.of(function, errno, strerror(errno), detail);
  }

  /** Throws when a call returning an errno value (0 = success) failed. */
  static void checkReturn(String function, int rc) {
    if (rc != 0) {
      // Some verbs return -1 and set errno, others return the positive errno: accept both.
      throw failure(function, rc < 0 ? lastErrnoOr(-rc) : rc);
    }
  }

  private static int lastErrnoOr(int fallback) {
    int e = lastErrno();
    return e != 0 ? e : fallback;
  }
}
