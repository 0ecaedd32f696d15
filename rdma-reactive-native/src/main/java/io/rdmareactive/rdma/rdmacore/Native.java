package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * FFM plumbing shared by the three bindings ({@link Ibverbs}, {@link Librdmacm}, {@link Libc})
 * and the inline verbs ({@link InlineVerbs}): library lookup with a clear error, downcalls with
 * errno capture, errno text, typed failures.
 * libibverbs reports errors two ways: NULL/-1 with errno set (create and alloc calls), or the
 * errno value as the return (destroy, modify and post calls).
 */
final class Native {
  static final Linker LINKER = Linker.nativeLinker();
  static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
  private static final ThreadLocal<MemorySegment> CALL_STATE_SEGMENT =
      ThreadLocal.withInitial(() -> Arena.global().allocate(CALL_STATE));
  /** Every C function bound so far, to the library it was bound from: each may be bound once. */
  private static final Map<String, String> BOUND = new ConcurrentHashMap<>();

  private Native() {}

  /**
   * One shared library's symbols. A library (or symbol) that is missing does not fail class
   * initialization: its handles throw {@link NativeLibraryUnavailableException} when called, and
   * {@link #check()} reports the first thing that was missing.
   */
  static final class Library {
    private final String name;
    private final @Nullable SymbolLookup lookup;
    private volatile @Nullable NativeLibraryUnavailableException failure;

    private Library(String name, @Nullable SymbolLookup lookup, @Nullable NativeLibraryUnavailableException failure) {
      this.name = name;
      this.lookup = lookup;
      this.failure = failure;
    }

    /** Binds {@code function}; with {@code errno}, the handle takes the call-state segment first. */
    MethodHandle bind(String function, FunctionDescriptor fd, boolean errno, Linker.Option... extra) {
      String before = BOUND.putIfAbsent(function, name);
      if (before != null) {
        throw new IllegalStateException(function + " is bound twice (from " + before + " and " + name + ")");
      }
      Linker.Option[] options = options(errno, extra);
      SymbolLookup l = lookup;
      MemorySegment symbol = l == null ? null : l.find(function).orElse(null);
      if (symbol == null) {
        NativeLibraryUnavailableException e = failure;
        if (e == null) {
          e = new NativeLibraryUnavailableException(name + " (symbol " + function + ")", null);
          failure = e;
        }
        MethodType type = LINKER.downcallHandle(fd, options).type().dropParameterTypes(0, 1);
        MethodHandle thrower = MethodHandles.throwException(type.returnType(), NativeLibraryUnavailableException.class)
            .bindTo(e);
        return MethodHandles.dropArguments(thrower, 0, type.parameterList());
      }
      return LINKER.downcallHandle(symbol, fd, options);
    }

    /** Throws why this library cannot be used, if it cannot. */
    void check() {
      NativeLibraryUnavailableException e = failure;
      if (e != null) {
        throw e;
      }
    }
  }

  /** {@code soname}, looked up once; loading failures surface through {@link Library#check()}. */
  static Library library(String soname) {
    try {
      return new Library(soname, SymbolLookup.libraryLookup(soname, Arena.global()), null);
    } catch (IllegalArgumentException e) {
      return new Library(soname, null, new NativeLibraryUnavailableException(soname, e));
    }
  }

  /** The C library (the linker's default lookup). */
  static Library libc() {
    return new Library("libc", LINKER.defaultLookup(), null);
  }

  /** A handle for calling a function pointer (first argument: the pointer), e.g. an ops-table entry. */
  static MethodHandle pointerCall(FunctionDescriptor fd, boolean errno, Linker.Option... extra) {
    return LINKER.downcallHandle(fd, options(errno, extra));
  }

  private static Linker.Option[] options(boolean errno, Linker.Option[] extra) {
    if (!errno) {
      return extra;
    }
    Linker.Option[] all = new Linker.Option[extra.length + 1];
    all[0] = CAPTURE_ERRNO;
    System.arraycopy(extra, 0, all, 1, extra.length);
    return all;
  }

  /** The names of the C functions bound so far (by the binding classes initialized so far). */
  static Set<String> boundFunctions() {
    return Collections.unmodifiableSet(new TreeSet<>(BOUND.keySet()));
  }

  /** This thread's call-state segment to pass to errno-capturing handles. */
  static MemorySegment callState() {
    return CALL_STATE_SEGMENT.get();
  }

  /** The errno captured in this thread's call-state segment by the last capturing call. */
  static int lastErrno() {
    return (int) ERRNO.get(callState(), 0L);
  }

  /** The errno a failed status call reported (0 when it succeeded): positive, or -1 with errno. */
  static int errnoOf(int rc) {
    return rc == 0 ? 0 : rc < 0 ? lastErrnoOr(-rc) : rc;
  }

  /** {@code p}, or the typed failure of {@code function} with the captured errno when it is NULL. */
  static MemorySegment created(String function, MemorySegment p) {
    if (p.address() == 0) {
      throw failure(function, lastErrnoOr(NativeCallException.EIO));
    }
    return p;
  }

  /** Rethrows what a downcall threw: unchecked as they are, anything else wrapped. */
  static RdmaException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new RdmaException("unexpected failure of a native call", t);
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
