package io.rdmareactive.rdma.transport;

import java.util.ArrayDeque;

/**
 * The sources whose items are all posted, each completed, in order, once every data send up to
 * its last has completed with none failed and the peer has released its rendezvous messages
 * ({@link #acknowledge}); and the count of data sends completed that this is judged by. A source
 * whose last send completed before its end was seen completes at once ({@link #posted}). Plain
 * state driven from the connection's drain.
 */
final class SourceAcks {
  private final RendezvousSender rendezvous;
  private final ArrayDeque<SendSource> awaiting = new ArrayDeque<>();
  private long dataCompleted;
  /** Sequence number of the first data send that failed; sends before it were delivered. */
  private long firstFailedData = Long.MAX_VALUE;

  SourceAcks(RendezvousSender rendezvous) {
    this.rendezvous = rendezvous;
  }

  /** The sequence number of the last data send completed (the first is 1). */
  long dataCompleted() {
    return dataCompleted;
  }

  /**
   * {@code src} has all its items posted, its last in data send {@code lastSequence}: it completes
   * when that one has, at once if it has already. That skips {@link #acknowledge}'s checks (a
   * failed send, an unreleased rendezvous); going through them made three native close and
   * conformance tests hang (485fa4b, reverted), for a reason not yet found.
   */
  void posted(SendSource src, long lastSequence) {
    src.lastSequence = lastSequence;
    if (dataCompleted >= lastSequence) {
      src.complete();
    } else {
      awaiting.add(src);
    }
  }

  /** The next data send completed, {@code success} or not; returns its sequence number. */
  long dataSendCompleted(boolean success) {
    dataCompleted++;
    if (!success && firstFailedData == Long.MAX_VALUE) {
      firstFailedData = dataCompleted;
    }
    return dataCompleted;
  }

  /** Completes the sources whose sends have all completed, none of them failed. */
  void acknowledge() {
    SendSource head;
    while ((head = awaiting.peek()) != null && head.lastSequence <= dataCompleted
        && head.lastSequence < firstFailedData && rendezvous.settledThrough(head.lastSequence)) {
      awaiting.poll();
      head.complete();
    }
  }

  /** Closing: completes those whose sends all completed, and fails the rest with {@code e}. */
  void failUnacknowledged(Throwable e) {
    acknowledge();
    SendSource unacknowledged;
    while ((unacknowledged = awaiting.poll()) != null) {
      unacknowledged.fail(e);
    }
  }
}
