package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Joins the fragments of an inbound message (SENDs with the MORE bit, then one without) into heap
 * memory, refusing messages over the maximum size. Plain state driven from the channel's drain.
 */
final class Reassembler {
  private final long maxMessageSize;
  private byte @Nullable [] assembly;
  private int assemblyLength;

  Reassembler(long maxMessageSize) {
    this.maxMessageSize = maxMessageSize;
  }

  /** Whether a SEND with header {@code immediate} is part of a fragmented message. */
  boolean isFragment(int immediate) {
    return (immediate & Protocol.MORE) != 0 || assembly != null;
  }

  /**
   * Appends a fragment of {@code length} bytes at {@code offset} in {@code from}; false, dropping
   * the message, when it grows over the maximum size (a protocol error).
   */
  boolean append(MemorySegment from, long offset, int length) {
    // A new message starts from zero: the length of the last one (kept for its copy) is stale.
    long total = (assembly == null ? 0L : assemblyLength) + length;
    if (total > maxMessageSize) {
      assembly = null;
      return false;
    }
    if (assembly == null) {
      assembly = new byte[Math.max(length * 2, 1024)];
      assemblyLength = 0;
    } else if (total > assembly.length) {
      assembly = Arrays.copyOf(assembly, (int) Math.min(maxMessageSize, Math.max(total, (long) assembly.length * 2)));
    }
    MemorySegment.copy(from, ValueLayout.JAVA_BYTE, offset, assembly, assemblyLength, length);
    assemblyLength += length;
    return true;
  }

  /** After a fragment with header {@code immediate}: the whole message if that was its last fragment, else null. */
  byte @Nullable [] complete(int immediate) {
    byte[] a = assembly;
    if ((immediate & Protocol.MORE) != 0 || a == null) {
      return null;
    }
    assembly = null;
    return assemblyLength == a.length ? a : Arrays.copyOf(a, assemblyLength);
  }

  /** Bytes of a message in progress, whose last fragment has not come yet; -1 when none is. */
  long inProgress() {
    return assembly == null ? -1 : assemblyLength;
  }

  /** Drops a message in progress (the connection is closing). */
  void clear() {
    assembly = null;
  }
}
