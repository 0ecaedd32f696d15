package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.Nullable;

/**
 * The credit protocol's arithmetic for one framed connection: the credits the peer granted us,
 * the grants we still owe it, and when a credit-only message is due. Plain state driven from the
 * channel's drain.
 *
 * <h2>The protocol</h2>
 * A credit is one receive buffer the peer posted and told us of; every SEND, data or credit
 * update, consumes one, so a sender that never exceeds its credits never causes an RNR. Receives
 * are posted per unit of the inbound subscriber's demand (at most {@code bufferCount} beyond
 * what the subscriber still holds), plus a reserve of {@link Protocol#RESERVE} that is always
 * posted, so no demand means no credits and the peer's publisher is simply not asked for more.
 * Grants (receives posted since the last grant) ride in the immediate data of every outgoing SEND
 * but a fragmented message's first, whose header declares the message's length instead.
 *
 * <p>When nothing is going the other way, grants need a credit-only message, which itself costs
 * the peer a receive that it reposts and must grant back. Three rules make that both live and
 * quiet:
 * <ol>
 *   <li>Data needs two credits; the last one is kept for a credit update. Both sides start with
 *       {@code RESERVE} = 2 credits (the reserve receives, posted before the connection is
 *       established).
 *   <li>A credit update carries at least two grants, and is sent only when the grants reach a
 *       threshold ({@code max(2, bufferCount / 4)}) or reach what the peer still holds (it may
 *       be stalled). Since one update grants at least two and costs the peer only one receive,
 *       which is at most one grant there, updates answering updates halve each round and die
 *       out: they never ping-pong.
 *   <li>Liveness: with demand and a free buffer the receiver has at least {@code RESERVE + 1}
 *       receives posted; a stalled sender holds at most one credit, so at least two grants are
 *       pending and rule 2 fires. The receiver has a credit for it: its credits drop to 0 only
 *       by an update, and the peer's answer to that update brings at least two back.
 * </ol>
 * So outstanding sends never exceed credits, nothing queues without bound (the outbound
 * publisher is asked for at most {@code min(credits - 1, free send buffers)} items), and a slow
 * consumer holds back the remote publisher.
 */
final class CreditWindow {
  private final int threshold;
  /** Receive buffers of the peer this side may still fill. */
  private long credits = Protocol.RESERVE;
  /** Every grant this side ever announced, the peer's initial reserve included. */
  private long grantedTotal = Protocol.RESERVE;
  /** Every SEND of the peer that consumed one of our receives. */
  private long peerArrivals;
  /** Receives posted since the last grant went out. */
  private int grantsPending;
  /** The most credits the peer may have granted us: its announced buffers plus the reserve. */
  private long peerMaxCredits = Long.MAX_VALUE;

  CreditWindow(int bufferCount) {
    // Pending grants never exceed the receive buffers; they must fit the header's grant field.
    if (bufferCount < 1 || Protocol.withReserve(bufferCount) > Protocol.GRANT_MASK) {
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

  /**
   * The peer announced {@code bufferCount} receive buffers: it can never grant more (plus the
   * reserve). Grants that arrived before (its SENDs may overtake our start) are checked now:
   * returns the violation they commit, or null.
   */
  @Nullable String peerBuffers(int bufferCount) {
    peerMaxCredits = Protocol.withReserve(bufferCount);
    return credits > peerMaxCredits ? overGranted(credits) : null;
  }

  private String overGranted(long granted) {
    return "it granted " + granted + " credits, more than the " + peerMaxCredits
        + " receive buffers it announced (reserve included)";
  }

  /**
   * A SEND of the peer arrived with header {@code immediate}: it used one of our receives.
   * Returns the protocol violation it commits, or null: a SEND beyond the credits this side
   * granted, or grants beyond the buffers the peer announced (the counts stop at the violation).
   */
  @Nullable String arrived(int immediate) {
    return arrivedGranting(immediate & Protocol.GRANT_MASK);
  }

  /** As {@link #arrived}, for a SEND whose header grants nothing (a first fragment's declares a length instead). */
  @Nullable String arrivedWithoutGrants() {
    return arrivedGranting(0);
  }

  private @Nullable String arrivedGranting(int grants) {
    if (peerArrivals + 1 > grantedTotal) {
      return "it sent beyond the " + grantedTotal + " credits granted to it";
    }
    long granted = credits + grants;
    if (granted > peerMaxCredits) {
      return overGranted(granted);
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
    grantedTotal += grantsPending;
    grantsPending = 0;
    return sentWithoutGrants();
  }

  /** As {@link #sent}, for a SEND whose header announces no grants (a first fragment's): they stay pending for the next. */
  boolean sentWithoutGrants() {
    boolean covered = credits >= 1;
    credits--;
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
