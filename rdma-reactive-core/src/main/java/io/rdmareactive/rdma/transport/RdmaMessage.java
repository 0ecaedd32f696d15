package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * One received message. A message that fitted one buffer is a view over the registered receive
 * buffer it landed in: that buffer goes back to the receive queue (and its credit back to the
 * peer) only on {@link #release()}, so release every message, once done with it. A fragmented
 * message was reassembled into memory of its own. A message kept past its connection's close
 * stays readable, with its own bytes, until it is released (the connection's memory is freed with
 * the last message held over it). Once released, reading it fails with
 * {@link IllegalStateException}, and so does reading a {@link #segment()} taken from it before.
 */
public interface RdmaMessage {
  /** Payload size in bytes. */
  int length();

  /**
   * The payload, read-only, without a copy, valid until {@link #release()}: reads after it fail
   * with {@link IllegalStateException}. That check is the JDK's, so a direct ByteBuffer taken from
   * the segment and read by its address (Netty's Unsafe-based buffers, a native writev) bypasses
   * it; hand such code {@link #asByteBuffer()} instead, or keep the message until it is done.
   */
  MemorySegment segment();

  /**
   * The payload as a read-only buffer (position 0, limit {@link #length()}). A received view's is a
   * copy on the heap, safe to hand to code that reads by address, and readable after the release.
   */
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
