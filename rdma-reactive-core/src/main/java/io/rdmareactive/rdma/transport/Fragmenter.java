package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.Nullable;

/**
 * Cuts the message being sent into SENDs no larger than the peer's receive buffer: the length of
 * each fragment and whether more follow it (the header's MORE bit). A fragmented message's first
 * SEND declares the message's length in its header ({@link Protocol#firstFragment}, see
 * {@link #lengthDue()}), so every fragment but the last is a whole buffer. Plain state driven from
 * the connection's drain; it copies nothing, the message being whatever the sender copies from.
 */
final class Fragmenter {
  private int chunk;
  private long maxMessage;
  private @Nullable Object message;
  private long length;
  private long offset;

  Fragmenter(int chunk, long maxMessage) {
    limits(chunk, maxMessage);
  }

  /** Sizes to the peer (its buffer size and the agreed maximum message size). */
  void limits(int chunk, long maxMessage) {
    if (chunk < 1) {
      throw new IllegalArgumentException("fragment size must be positive, was " + chunk);
    }
    this.chunk = chunk;
    this.maxMessage = maxMessage;
  }

  int chunk() {
    return chunk;
  }

  long maxMessage() {
    return maxMessage;
  }

  /** Whether a message of {@code size} bytes may be sent at all. */
  boolean fits(long size) {
    return size <= maxMessage;
  }

  /** The message being sent, null between messages. */
  @Nullable Object message() {
    return message;
  }

  void start(Object message, long length) {
    this.message = message;
    this.length = length;
    this.offset = 0;
  }

  /** SENDs a message of {@code size} bytes takes (an empty one takes one). */
  long sendsFor(long size) {
    return size <= chunk ? 1 : (size + chunk - 1) / chunk;
  }

  /** SENDs the message being sent still takes; 0 between messages. */
  long sendsLeft() {
    return message == null ? 0 : sendsFor(length - offset);
  }

  /** Where the next fragment starts in the message. */
  long offset() {
    return offset;
  }

  /** Whether the next SEND must declare the message's length: the first of a fragmented message. */
  boolean lengthDue() {
    return offset == 0 && length > chunk;
  }

  /** The message's length, as the first fragment declares it. */
  long length() {
    return length;
  }

  /** The next fragment's length: a whole buffer but for the last; an empty message is one empty fragment. */
  int nextLength() {
    return (int) Math.min(length - offset, chunk);
  }

  /** Whether the message goes on after a fragment of {@code fragmentLength} at {@link #offset}. */
  boolean moreAfter(int fragmentLength) {
    return length - offset > fragmentLength;
  }

  /** A fragment of {@code fragmentLength} was posted; true when it was the last one (the message is done). */
  boolean advance(int fragmentLength) {
    offset += fragmentLength;
    if (offset < length) {
      return false;
    }
    message = null;
    return true;
  }

  /** Drops the message being sent, returning it (for its release), or null. */
  @Nullable Object abandon() {
    Object m = message;
    message = null;
    return m;
  }
}
