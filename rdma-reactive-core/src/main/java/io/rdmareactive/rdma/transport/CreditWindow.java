package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.Nullable;

/**
 * The credit protocol's arithmetic for one framed connection (see {@link RdmaChannel}): the
 * credits the peer granted us, the grants we still owe it, and when a credit-only message is due.
 * Plain state driven from the channel's drain.
 */
final class CreditWindow {
  private final int threshold;
  /** Receive buffers of the peer this side may still fill. */
  private long credits = RdmaChannel.RESERVE;
  /** Every grant this side ever announced, the peer's initial reserve included. */
  private long grantedTotal = RdmaChannel.RESERVE;
  /** Every SEND of the peer that consumed one of our receives. */
  private long peerArrivals;
  /** Receives posted since the last grant went out. */
  private int grantsPending;
  /** The most credits the peer may have granted us: its announced buffers plus the reserve. */
  private long peerMaxCredits = Long.MAX_VALUE;

  CreditWindow(int bufferCount) {
    // Pending grants never exceed the receive buffers; they must fit the header's grant field.
    if (bufferCount < 1 || bufferCount + RdmaChannel.RESERVE > Protocol.GRANT_MASK) {
      throw new IllegalArgumentException("buffer count " + bufferCount + " does not fit the credit header");
    }
    this.threshold = Math.max(2, bufferCount / 4);
  }

  long credits() {
    return credits;
  }

  int grantsPending() {
    return grantsPending;
  }

  /** A receive was posted: one more grant to announce. */
  void receivePosted() {
    grantsPending++;
  }

  /** The peer announced {@code bufferCount} receive buffers: it can never grant more (plus the reserve). */
  void peerBuffers(int bufferCount) {
    peerMaxCredits = (long) bufferCount + RdmaChannel.RESERVE;
  }

  /**
   * A SEND of the peer arrived with header {@code immediate}: it used one of our receives.
   * Returns the protocol violation it commits, or null: a SEND beyond the credits this side
   * granted, or grants beyond the buffers the peer announced (the counts stop at the violation).
   */
  @Nullable String arrived(int immediate) {
    if (peerArrivals + 1 > grantedTotal) {
      return "it sent beyond the " + grantedTotal + " credits granted to it";
    }
    long granted = credits + (immediate & Protocol.GRANT_MASK);
    if (granted > peerMaxCredits) {
      return "it granted " + granted + " credits, more than the " + peerMaxCredits
          + " receive buffers it announced (reserve included)";
    }
    credits = granted;
    peerArrivals++;
    return null;
  }

  /** Data needs two credits: the last one is kept for a credit update. */
  boolean canSendData() {
    return credits >= 2;
  }

  /** How many data SENDs the credits allow now, the one kept for a credit update aside. */
  long dataCapacity() {
    return credits - 1;
  }

  /** The header of the next SEND: it announces every pending grant. */
  int header(boolean more, boolean credit) {
    return Protocol.immediate(grantsPending, more, credit);
  }

  /**
   * A SEND with {@link #header} was posted: it used a credit and announced the pending grants.
   * Returns false when it had no credit to use (a flow-control violation; counted by the caller).
   */
  boolean sent() {
    boolean covered = credits >= 1;
    credits--;
    grantedTotal += grantsPending;
    grantsPending = 0;
    return covered;
  }

  /**
   * Whether a credit-only message should go now: it carries at least two grants (so updates
   * answering updates die out) and waits for the threshold unless the peer may be stalled, i.e.
   * holds no more credits than we would grant.
   */
  boolean creditUpdateDue() {
    if (grantsPending < 2 || credits < 1) {
      return false;
    }
    long peerCredits = grantedTotal - peerArrivals;
    return grantsPending >= threshold || peerCredits <= grantsPending;
  }
}
