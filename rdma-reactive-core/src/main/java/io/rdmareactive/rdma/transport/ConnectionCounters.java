package io.rdmareactive.rdma.transport;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A connection's counters behind {@link RdmaStatistics}: written by the connection's drain alone,
 * as plain fields, and read by anyone through {@link #snapshot} after {@link
 * ConnectionDrain#synchronize}, so a snapshot sees every drain run that gave its count back; one
 * still running may be seen in part (a statistic, not a ledger). Not volatile: a volatile write is
 * a full fence on x86, and each message passed about a dozen of them on the loop's hot path.
 */
final class ConnectionCounters {
  private long messagesSent;
  private long messagesReceived;
  private long bytesSent;
  private long bytesReceived;
  private long creditUpdatesSent;
  private long creditUpdatesReceived;
  private int maxSendsInFlight;
  private long receiverNotReady;
  private long creditViolations;
  private long creditStalls;
  private long completionErrors;
  private long flushGiveUps;
  private long dataSends;
  /** Views over receive buffers made (drain); those released, from any thread, are counted apart. */
  private long messagesMade;
  private final AtomicLong messagesLetGo = new AtomicLong();
  private long doorbells;
  private long signaledSends;
  private long completionsPolled;
  private long bytesCopied;
  private long bytesRead;
  /**
   * Sequence numbers of the data sends in flight that end messages, and how many each ends (a
   * batch ends several), so that a message counts as sent when its last send completes (a ring:
   * at most one per send work request in flight; inline sends free their buffer at post time, so
   * the send queue's depth bounds it, not the buffers).
   */
  private final long[] messageEnds;
  private final int[] messagesEnded;
  private int messageEndsHead;
  private int messageEndsSize;

  ConnectionCounters(int sendDepth) {
    messageEnds = new long[sendDepth];
    messagesEnded = new int[sendDepth];
  }

  RdmaStatistics snapshot(long credits, long registeredBytes) {
    return new RdmaStatistics(messagesSent, messagesReceived, bytesSent, bytesReceived, creditUpdatesSent,
        creditUpdatesReceived, credits, maxSendsInFlight, receiverNotReady, creditViolations, creditStalls,
        completionErrors, registeredBytes, flushGiveUps, dataSends, doorbells, signaledSends, completionsPolled,
        held(), bytesCopied, bytesRead);
  }

  /**
   * Views not yet released: approximate while a drain runs, whose views made and released may be
   * seen in either order; never below 0.
   */
  private long held() {
    return Math.max(0, messagesMade - messagesLetGo.get());
  }

  void bytesReceived(int n) {
    bytesReceived += n;
  }

  /** A message view over a receive buffer was made (drain). */
  void messageHeld() {
    messagesMade++;
  }

  /** A message view was released, or dropped undelivered (any thread). */
  void messageLetGo() {
    messagesLetGo.incrementAndGet();
  }

  void messageReceived() {
    messagesReceived++;
  }

  void creditUpdateReceived() {
    creditUpdatesReceived++;
  }

  void creditUpdateSent() {
    creditUpdatesSent++;
  }

  void bytesSent(int n) {
    bytesSent += n;
  }

  /** The last send of {@code messages} messages (one, or a batch) was posted as data send number {@code sequence}. */
  void messagesPosted(long sequence, int messages) {
    if (messageEndsSize < messageEnds.length) {
      int at = messageEndsHead + messageEndsSize; // no remainder: a division per message is dear under emulation
      if (at >= messageEnds.length) {
        at -= messageEnds.length;
      }
      messageEnds[at] = sequence;
      messagesEnded[at] = messages;
      messageEndsSize++;
    }
  }

  /** Data sends up to number {@code sequence} completed successfully: the messages they end are sent. */
  void dataCompleted(long sequence) {
    while (messageEndsSize > 0 && messageEnds[messageEndsHead] <= sequence) {
      messagesSent += messagesEnded[messageEndsHead];
      messageEndsHead = messageEndsHead + 1 == messageEnds.length ? 0 : messageEndsHead + 1;
      messageEndsSize--;
    }
    dataSends = sequence;
  }

  void sendsInFlight(int n) {
    if (n > maxSendsInFlight) {
      maxSendsInFlight = n;
    }
  }

  void receiverNotReady() {
    receiverNotReady++;
  }

  void creditViolation() {
    creditViolations++;
  }

  void creditStall() {
    creditStalls++;
  }

  void completionError() {
    completionErrors++;
  }

  /** One post of a list of send work requests (one ibv_post_send). */
  void doorbell() {
    doorbells++;
  }

  /** A send work request asked for a completion. */
  void sendSignaled() {
    signaledSends++;
  }

  /** A completion (send or receive) was polled for this connection. */
  void completionPolled() {
    completionsPolled++;
  }

  /**
   * The library copied {@code n} bytes (drain): into a send buffer, or out of receive buffers
   * (reassembly, messages moved off a closing connection's memory).
   */
  void bytesCopied(long n) {
    bytesCopied += n;
  }

  /** {@code n} bytes of a rendezvous message were pulled from the peer by RDMA READ (drain). */
  void bytesRead(long n) {
    bytesRead += n;
  }

  /** The close stopped waiting for the flush completions of what was still posted. */
  void flushGiveUp() {
    flushGiveUps++;
  }
}
