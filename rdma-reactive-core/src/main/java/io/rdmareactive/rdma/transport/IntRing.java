package io.rdmareactive.rdma.transport;

import java.util.Arrays;

/**
 * A first-in first-out queue of ints with no object per element (an {@code ArrayDeque<Integer>}
 * boxes each one): a power-of-two ring that doubles when full. Plain state, one thread at a time.
 */
final class IntRing {
  private int[] ring;
  private int head;
  private int size;

  /** A ring with room for {@code capacity} ints before it first grows. */
  IntRing(int capacity) {
    ring = new int[Integer.highestOneBit(Math.max(2, capacity) * 2 - 1)];
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  /** Appends {@code value} at the tail. */
  void add(int value) {
    if (size == ring.length) {
      int[] grown = Arrays.copyOf(ring, ring.length * 2); // [0, length) in place, then the wrapped part moves up
      System.arraycopy(ring, 0, grown, ring.length, head);
      ring = grown;
    }
    ring[(head + size++) & (ring.length - 1)] = value;
  }

  /** The head, not removed; the ring must not be empty. */
  int peek() {
    if (size == 0) {
      throw new IllegalStateException("the ring is empty");
    }
    return ring[head];
  }

  /** Removes and returns the head; the ring must not be empty. */
  int poll() {
    int v = peek();
    head = (head + 1) & (ring.length - 1);
    size--;
    return v;
  }
}
