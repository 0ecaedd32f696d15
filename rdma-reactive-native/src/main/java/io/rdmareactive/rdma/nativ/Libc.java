package io.rdmareactive.rdma.nativ;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** The few libc functions the bindings need. */
final class Libc {
  private static final MethodHandle STRERROR = Native.LINKER.downcallHandle(
      Native.LINKER.defaultLookup().find("strerror").orElseThrow(),
      FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

  private Libc() {}

  static String strerror(int errno) {
    try {
      MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
      return s.reinterpret(256).getString(0);
    } catch (Throwable t) {
      return "errno " + errno;
    }
  }
}
