package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * Reads a batch: the payload of a SEND with the {@link Protocol#BATCH} flag, a message count and
 * then each message as its length and its bytes. The bytes are the peer's, so {@link #check}
 * validates the whole batch before anything is delivered, reading only inside the received bytes
 * and naming the first thing wrong; the cursor ({@link #start}, {@link #next}) then walks the
 * messages of a checked batch. One decoder per connection, reused: it allocates nothing.
 */
final class BatchDecoder {
  static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

  private MemorySegment memory = MemorySegment.NULL;
  private long at;
  private int left;
  private long messageStart;
  private int messageLength;

  /**
   * What is wrong with the batch of {@code length} bytes at {@code offset} in {@code memory}, or
   * null when it is well formed: every message at least one byte and at most {@code maxMessage},
   * and the count matching the bytes exactly.
   */
  static @Nullable String check(MemorySegment memory, long offset, int length, long maxMessage) {
    if (length < Protocol.BATCH_COUNT) {
      return "it sent a batch of " + length + " bytes, too short to hold its message count";
    }
    int count = memory.get(INT, offset);
    if (count < 1) {
      return "it sent a batch declaring " + count + " messages";
    }
    long at = offset + Protocol.BATCH_COUNT;
    long end = offset + length;
    for (int i = 0; i < count; i++) {
      if (end - at < Protocol.BATCH_LENGTH) {
        return "it sent a batch declaring " + count + " messages whose bytes end after " + i;
      }
      int n = memory.get(INT, at);
      at += Protocol.BATCH_LENGTH;
      if (n <= 0) {
        return "it sent a message of length " + n + " in a batch (a batched message has at least one byte)";
      }
      if (n > end - at) {
        return "it sent a length prefix of " + n + " bytes in a batch that overruns it (" + (end - at)
            + " bytes left)";
      }
      if (n > maxMessage) {
        return "it sent a message of " + n + " bytes in a batch, above the maximum of " + maxMessage + " bytes";
      }
      at += n;
    }
    if (at != end) {
      return "it sent a batch declaring " + count + " messages with " + (end - at) + " bytes after them";
    }
    return null;
  }

  /** Starts walking a batch that {@link #check} found well formed. */
  void start(MemorySegment memory, long offset) {
    this.memory = memory;
    this.left = memory.get(INT, offset);
    this.at = offset + Protocol.BATCH_COUNT;
  }

  /** Moves to the next message; false after the last. */
  boolean next() {
    if (left == 0) {
      memory = MemorySegment.NULL; // holds no buffer between batches
      return false;
    }
    left--;
    messageLength = memory.get(INT, at);
    messageStart = at + Protocol.BATCH_LENGTH;
    at = messageStart + messageLength;
    return true;
  }

  /** Where the current message starts in the memory given to {@link #start}. */
  long messageStart() {
    return messageStart;
  }

  /** The current message's length. */
  int messageLength() {
    return messageLength;
  }
}
