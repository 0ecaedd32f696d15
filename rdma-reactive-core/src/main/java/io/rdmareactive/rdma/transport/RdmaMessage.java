package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * One received message. A message that fitted one buffer is a view over the registered receive
 * buffer it landed in: that buffer goes back to the receive queue (and its credit back to the
 * peer) only on {@link #release()}, so release every message, once done with it. A fragmented
 * message was reassembled into memory of its own; releasing it is harmless. After the connection
 * closed, a view's memory is gone: reading it then fails with {@link IllegalStateException}.
 */
public interface RdmaMessage {
  /** Payload size in bytes. */
  int length();

  /** The payload, read-only, valid until {@link #release()}. */
  MemorySegment segment();

  /** The payload as a read-only buffer (position 0, limit {@link #length()}), valid until {@link #release()}. */
  default ByteBuffer asByteBuffer() {
    return segment().asByteBuffer().asReadOnlyBuffer();
  }

  /** A copy of the payload. */
  default byte[] toByteArray() {
    return segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
  }

  /** The payload decoded with {@code charset} (a copy). */
  default String toString(Charset charset) {
    return new String(toByteArray(), charset);
  }

  /** The payload decoded as UTF-8. */
  default String asString() {
    return toString(StandardCharsets.UTF_8);
  }

  /** Gives the buffer back for reuse. Idempotent; thread-safe. */
  void release();
}
