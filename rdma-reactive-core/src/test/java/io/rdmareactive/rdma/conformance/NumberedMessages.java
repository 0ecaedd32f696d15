package io.rdmareactive.rdma.conformance;

import java.nio.ByteBuffer;

/**
 * Numbered messages whose every byte is known from their number, for the tests that must show each
 * was delivered exactly once, in order, intact: message {@code n} is {@code n} (8 bytes) then a
 * size that cycles from 1 to {@value #MAX_BODY} bytes (so that many span several packets of a
 * 1024-byte path MTU), each byte a function of {@code n} and its position.
 */
public final class NumberedMessages {
  /** The largest body. */
  public static final int MAX_BODY = 3000;

  private long next;

  /** The message numbered {@code n}. */
  public static byte[] message(long n) {
    int body = (int) (n * 7919 % MAX_BODY) + 1;
    ByteBuffer b = ByteBuffer.allocate(8 + body).putLong(n);
    for (int i = 0; i < body; i++) {
      b.put(i + 8, (byte) (n * 31 + i));
    }
    return b.array();
  }

  /**
   * Checks that {@code received} is the next message expected (0, 1, 2, ...).
   *
   * @throws AssertionError naming what is wrong: a gap (lost), a repeat (duplicate), a reordering
   *     or a corrupted byte
   */
  public void verify(byte[] received) {
    if (received.length < 8) {
      throw new AssertionError("message " + next + ": only " + received.length + " bytes");
    }
    long n = ByteBuffer.wrap(received).getLong(0);
    if (n != next) {
      throw new AssertionError("expected message " + next + ", got " + n
          + (n < next ? " (a duplicate or reordered)" : " (" + (n - next) + " lost or reordered)"));
    }
    byte[] expected = message(n);
    if (!java.util.Arrays.equals(expected, received)) {
      throw new AssertionError("message " + n + " corrupted: " + received.length + " bytes, expected " + expected.length);
    }
    next++;
  }

  /** How many arrived in order so far. */
  public long count() {
    return next;
  }
}
