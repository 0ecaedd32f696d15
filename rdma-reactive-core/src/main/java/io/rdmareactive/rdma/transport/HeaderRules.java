package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.Nullable;

/**
 * The framing rules an inbound SEND's header must keep (see {@link Protocol}): one job, saying
 * what a peer broke, so that {@link InboundReceiver} only dispatches headers that are sound.
 */
final class HeaderRules {
  private HeaderRules() {}

  /** Whether a SEND came without a usable header: no immediate data, or reserved bits set. */
  static boolean unframed(boolean hasImmediate, int imm) {
    return !hasImmediate || (imm & Protocol.RESERVED_MASK) != 0;
  }

  /**
   * What is wrong with a SEND of {@code length} bytes with header {@code imm} that the credits
   * allowed, or null. Each rule is one the sender keeps, and the last two end a ping-pong a peer
   * could keep up with a receiver that has no demand, whose reserve receives it reposts and grants
   * whatever comes: a credit update carries at least two grants ({@link CreditWindow}, rule 2, so
   * that updates answering updates die out), and a fragment that announces more is never empty
   * (the fragmenter fills every fragment but the last), so that each one brings the message
   * closer to its maximum size.
   */
  static @Nullable String violation(int imm, int length) {
    int rendezvous = imm & (Protocol.RNDV | Protocol.DONE);
    if (rendezvous != 0 && (rendezvous == (Protocol.RNDV | Protocol.DONE)
        || (imm & (Protocol.CREDIT | Protocol.MORE | Protocol.BATCH)) != 0)) {
      return "it sent a rendezvous header with other flags (RNDV with DONE, CREDIT, MORE or BATCH)";
    }
    if ((imm & Protocol.CREDIT) != 0) {
      if (length > 0 || (imm & (Protocol.MORE | Protocol.BATCH)) != 0) {
        return "it sent a credit update with a payload, a fragment or a batch flag";
      }
      if ((imm & Protocol.GRANT_MASK) < 2) {
        return "it sent a credit update granting " + (imm & Protocol.GRANT_MASK) + " credits (an update grants at least 2)";
      }
    } else if ((imm & Protocol.MORE) != 0) {
      return fragmentViolation(length);
    }
    return null;
  }

  /**
   * What is wrong with a fragment of {@code length} bytes that announces more, or null: a first
   * one (whose header is a length, checked when taken) or a later one.
   */
  static @Nullable String fragmentViolation(int length) {
    return length == 0 ? "it sent an empty fragment" : null;
  }
}
