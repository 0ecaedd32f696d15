package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jspecify.annotations.Nullable;

/**
 * Joins the fragments of an inbound message (SENDs with the MORE bit, then one without) into heap
 * memory. The first fragment declares the message's length (in its header,
 * {@link Protocol#firstFragment}): the receiver checks it against its limits and budget and then
 * allocates the message once, at that size, never growing it; fragments that overrun it, or a last one that
 * leaves it short, break the protocol. Plain state driven from the connection's drain.
 */
final class Reassembler {
  private byte @Nullable [] assembly;
  private int assemblyLength;

  /** Whether a SEND with header {@code immediate} is part of a fragmented message. */
  boolean isFragment(int immediate) {
    return (immediate & Protocol.MORE) != 0 || assembly != null;
  }

  /** Starts a message of the {@code total} bytes its first fragment declared: allocated once, here. */
  void begin(int total) {
    assembly = new byte[total];
    assemblyLength = 0;
  }

  /**
   * Appends a fragment's {@code length} message bytes at {@code offset} in {@code from}; false,
   * appending nothing, when they would overrun the declared length (a protocol error).
   */
  boolean append(MemorySegment from, long offset, int length) {
    byte[] a = assembly;
    if (a == null || length > a.length - assemblyLength) {
      return false;
    }
    MemorySegment.copy(from, ValueLayout.JAVA_BYTE, offset, a, assemblyLength, length);
    assemblyLength += length;
    return true;
  }

  /** Bytes the message in progress still lacks of its declared length; 0 when none is in progress. */
  int missing() {
    byte[] a = assembly;
    return a == null ? 0 : a.length - assemblyLength;
  }

  /** The whole message, once its last fragment came and filled it; it is then no longer in progress. */
  byte @Nullable [] complete() {
    byte[] a = assembly;
    if (a == null || assemblyLength != a.length) {
      return null;
    }
    assembly = null;
    return a;
  }

  /** Bytes of a message in progress, whose last fragment has not come yet; -1 when none is. */
  long inProgress() {
    return assembly == null ? -1 : assemblyLength;
  }

  /** The declared length of the message in progress (what it holds allocated); 0 when none is. */
  int declared() {
    byte[] a = assembly;
    return a == null ? 0 : a.length;
  }

  /** Drops a message in progress (the connection is closing, or its peer broke the protocol). */
  void clear() {
    assembly = null;
  }
}
