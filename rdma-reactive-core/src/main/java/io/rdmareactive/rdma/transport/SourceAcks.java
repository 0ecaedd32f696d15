package io.rdmareactive.rdma.transport;

import java.util.ArrayDeque;
import java.util.function.LongPredicate;

/**
 * The sources whose items are all posted, each completed, in order, once every data send up to
 * its last has completed with none failed and the peer has released its rendezvous messages; and
 * the count of data sends completed that this is judged by. Plain state driven from the
 * connection's drain.
 */
final class SourceAcks {
  /** Whether every rendezvous message whose descriptor is data send {@code sequence} or earlier is released. */
  private final LongPredicate settledThrough;
  private final ArrayDeque<SendSource> awaiting = new ArrayDeque<>();
  private long dataCompleted;
  /** Sequence number of the first data send that failed; sends before it were delivered. */
  private long firstFailedData = Long.MAX_VALUE;

  SourceAcks(LongPredicate settledThrough) {
    this.settledThrough = settledThrough;
  }

  /** The sequence number of the last data send completed (the first is 1). */
  long dataCompleted() {
    return dataCompleted;
  }

  /**
   * {@code src} has all its items posted, its last in data send {@code lastSequence}: it completes
   * as {@link #acknowledge} says, at once if that allows (its sends may have completed already).
   */
  void posted(SendSource src, long lastSequence) {
    src.lastSequence = lastSequence;
    awaiting.add(src);
    acknowledge(); // not complete() outright: a failed send or an unreleased rendezvous holds it too
  }

  /** The next data send completed, {@code success} or not; returns its sequence number. */
  long dataSendCompleted(boolean success) {
    dataCompleted++;
    if (!success && firstFailedData == Long.MAX_VALUE) {
      firstFailedData = dataCompleted;
    }
    return dataCompleted;
  }

  /** Completes, in order, the sources whose sends all completed, none failed, and whose rendezvous messages are released. */
  void acknowledge() {
    SendSource head;
    while ((head = awaiting.peek()) != null && head.lastSequence <= dataCompleted
        && head.lastSequence < firstFailedData && settledThrough.test(head.lastSequence)) {
      awaiting.poll();
      head.complete();
    }
  }

  /** Closing: completes those whose sends all completed, and fails the rest with {@code e}. */
  void failUnacknowledged(Throwable e) {
    try {
      acknowledge();
    } finally {
      SendSource.failAll(awaiting, e); // also when a subscriber threw from onComplete above
    }
  }
}
