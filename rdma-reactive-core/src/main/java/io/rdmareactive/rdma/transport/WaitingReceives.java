package io.rdmareactive.rdma.transport;

import java.util.function.IntConsumer;

/**
 * Completed receives that wait, in order, behind a first fragment that waits for byte budget
 * ({@link FragmentReceiver}): each one's buffer index, length and header, in a fixed ring with
 * room for every receive a connection can have posted, so that waiting allocates nothing. Plain
 * state driven from the connection's drain.
 */
final class WaitingReceives {
  /** Ints per receive in the ring: buffer index, length, header. */
  private static final int FIELDS = 3;
  /** {@link #FIELDS} ints per receive: its capacity is derived from its length. */
  private final int[] ring;
  private int head;
  private int count;

  /** Room for {@code capacity} receives: a connection's receive buffers. */
  WaitingReceives(int capacity) {
    this.ring = new int[FIELDS * capacity];
  }

  boolean isEmpty() {
    return count == 0;
  }

  /** Appends a receive that completed into buffer {@code index} with {@code length} bytes and {@code header}. */
  void add(int index, int length, int header) {
    if (count == capacity()) {
      throw new IllegalStateException("more receives waiting than " + capacity() + " buffers");
    }
    int at = FIELDS * ((head + count++) % capacity());
    ring[at] = index;
    ring[at + 1] = length;
    ring[at + 2] = header;
  }

  /** The oldest one's buffer index; the ring must not be empty. */
  int index() {
    return ring[FIELDS * head];
  }

  /** The oldest one's length. */
  int length() {
    return ring[FIELDS * head + 1];
  }

  /** The oldest one's header (immediate data). */
  int header() {
    return ring[FIELDS * head + 2];
  }

  /** Removes the oldest one, taken. */
  void remove() {
    head = (head + 1) % capacity();
    count--;
  }

  private int capacity() {
    return ring.length / FIELDS;
  }

  /** Hands every waiting receive's buffer to {@code free}, oldest first, and empties the ring. */
  void clear(IntConsumer free) {
    for (; count > 0; remove()) {
      free.accept(index());
    }
  }
}
