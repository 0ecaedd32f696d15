package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.SendRequest;
import java.util.ArrayDeque;

/**
 * The messages a connection sends from registered memory ({@link RegisteredMessage}) whose SENDs
 * the device may still read: each is released, giving its region back, once every data send up
 * to its last one has retired. Send completions come in posting order and one signaled completion
 * retires the unsignaled sends before it ({@link SendDoorbell}), so a message is never released
 * while a send of it is still with the device. Plain state driven from the connection's drain.
 */
final class RegisteredSends {
  private final ArrayDeque<RegisteredMessage> inFlight = new ArrayDeque<>();

  /**
   * The gather entries of a fragment of {@code m}: {@code length} bytes at {@code at} in the
   * message, straight from its region (an entry per range the fragment spans).
   */
  void gather(SendRequest r, RegisteredMessage m, long at, int length) {
    long skip = at;
    for (int i = 0, ranges = m.ranges(); i < ranges && length > 0; i++) {
      int len = m.rangeLength(i);
      if (skip >= len) {
        skip -= len;
        continue;
      }
      // never an empty entry (take > 0): some devices read a zero length as 2 GiB
      int take = (int) Math.min(len - skip, length);
      r.gather(m.region(), m.rangeOffset(i) + skip, take);
      length -= take;
      skip = 0;
    }
  }

  /** The last send of {@code m} (or the last one posted, when it is abandoned half sent) is data send {@code sequence}. */
  void posted(RegisteredMessage m, long sequence) {
    m.lastSequence = sequence;
    inFlight.add(m);
  }

  /**
   * {@code m} is dropped half sent (disconnecting): released once the sends posted so far, up to
   * {@code posted}, retired ({@code completed} have).
   */
  void abandoned(RegisteredMessage m, long posted, long completed) {
    posted(m, posted);
    retired(completed);
  }

  /** Data sends up to {@code sequence} retired (succeeded or failed): their messages are released. */
  void retired(long sequence) {
    RegisteredMessage m;
    while ((m = inFlight.peek()) != null && m.lastSequence <= sequence) {
      inFlight.poll();
      m.release();
    }
  }

  /**
   * The queue pair is destroyed, so the device reads none of the memory any more: releases what
   * a close that gave up on its flush completions still held.
   */
  void releaseAll() {
    RegisteredMessage m;
    while ((m = inFlight.poll()) != null) {
      m.release();
    }
  }
}
