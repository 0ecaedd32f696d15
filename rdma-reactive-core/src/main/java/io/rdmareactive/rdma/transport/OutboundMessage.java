package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * An item for {@link RdmaOutbound#send} that writes its own bytes into the send buffers: the
 * transport calls {@link #copyTo} once per fragment, when it posts the fragment, and
 * {@link #release} once, after the last fragment was copied or when the item is dropped (the
 * connection closed, the send was cancelled, the message exceeds the maximum size). For data held
 * in memory the transport cannot take as one {@link MemorySegment} (a buffer of several
 * components, pooled memory with a reference count) it spares the copy into an intermediate
 * {@code byte[]} that the other item types would need, and the allocation of it per message.
 * The transport calls both methods from the connection's drain: one thread at a time (its loop's,
 * in event mode), each call ordered after the one before.
 */
public interface OutboundMessage {
  /**
   * A message of {@code length} bytes at {@code offset} in {@code region}, sent with no copy: the
   * SENDs gather straight from the region, which must be registered on the protection domain of
   * the loops the connection runs on ({@link RdmaLoopResources#protectionDomain}). Leave the bytes
   * alone until {@link RegisteredMessage#released()} completes. Send it once.
   *
   * @throws IndexOutOfBoundsException when the range is not inside the region
   * @throws io.rdmareactive.rdma.ResourceClosedException when the region is deregistered
   */
  static RegisteredMessage of(MemoryRegion region, long offset, int length) {
    return new RegisteredMessage(region, offset, length);
  }

  /**
   * A message gathered with no copy from up to {@link RegisteredMessage#MAX_RANGES} ranges of
   * {@code region}, in order: range {@code i} is {@code lengths[i]} bytes at {@code offsets[i]}
   * (an RSocket frame's header, metadata and data, say). As {@link #of(MemoryRegion, long, int)},
   * but never by rendezvous; {@code onRelease}, when not null, runs once when the transport is
   * done with the memory (on the connection's thread: keep it short and non-blocking). The arrays
   * are copied.
   *
   * @throws IllegalArgumentException for no ranges, more than {@code MAX_RANGES}, or arrays of different lengths
   * @throws IndexOutOfBoundsException when a range is not inside the region
   */
  static RegisteredMessage gather(MemoryRegion region, long[] offsets, int[] lengths,
      @Nullable Runnable onRelease) {
    return new RegisteredMessage(region, offsets, lengths, onRelease);
  }

  /** Payload size in bytes; must not change once emitted. */
  int length();

  /**
   * Copies {@code length} bytes of the payload, starting at {@code offset}, to {@code target} at
   * {@code targetOffset}. The target is the fragment's own registered send buffer, no other
   * memory: at least {@code targetOffset + length} bytes, of which that range is sent.
   */
  void copyTo(long offset, MemorySegment target, long targetOffset, int length);

  /** The transport is done with this item: called exactly once. */
  void release();
}
