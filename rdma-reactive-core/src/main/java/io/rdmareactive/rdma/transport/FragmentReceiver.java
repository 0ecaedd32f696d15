package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.Nullable;

/**
 * A connection's inbound fragments: joins them into messages on the heap, counting each in bytes.
 * A fragmented message's declared length is reserved, out of this connection's
 * {@link RdmaOption#MAX_INBOUND_BYTES} and its server's {@link RdmaOption#MAX_SERVER_INBOUND_BYTES},
 * before it is allocated, and stays reserved until the subscriber takes the message (or it is
 * dropped). A first fragment that finds either spent is not taken, so that it waits in its
 * receive buffer (see {@link InboundReceiver}). Plain state driven from the connection's drain.
 *
 * <p>A first fragment's header declares the message's length where other SENDs carry grants and
 * flags ({@link Protocol#firstFragment}), so a header is read by its place in the peer's SENDs:
 * a MORE that follows the end of a message (or nothing) begins one. {@link #begins} follows that
 * order as SENDs arrive (for the credit window), {@link #startsMessage} as they are taken (those
 * waiting for budget later): messages never interleave, so for a peer that keeps the protocol
 * both see the same first fragments. Once the connection has failed (a violation, say) no
 * message starts: a first fragment is dropped, and so is every fragment after it up to its
 * message's last, as after a fragment that broke the protocol, so that no tail passes for a
 * message of its own.
 */
final class FragmentReceiver {
  private final ConnectionOperations connection;
  private final RegisteredBuffers buffers;
  private final ConnectionCounters counters;
  private final Reassembler reassembler = new Reassembler();
  private final InboundBudget shared;
  private final long budget;
  /** The largest message this side announced; larger declared lengths break the protocol. */
  private final long maxMessage;
  /** Bytes reserved: the message in progress at its declared length, and reassembled ones not yet taken. */
  private long reserved;
  /** Closed: the reservations went back to the server's total at once (see {@link #returnBudget}). */
  private boolean budgetReturned;
  /** The message the last fragment completed, until {@link #takeCompleted}. */
  private byte @Nullable [] completed;

  FragmentReceiver(ConnectionOperations connection, RegisteredBuffers buffers, ConnectionCounters counters,
      InboundBudget shared, long budget, long maxMessage) {
    this.connection = connection;
    this.buffers = buffers;
    this.counters = counters;
    this.shared = shared;
    this.budget = budget;
    this.maxMessage = maxMessage;
  }

  /** Whether the peer's last data SEND to arrive said MORE: a message of it is still arriving. */
  private boolean peerInMessage;
  /** The connection failed with a message's fragments still to come: they are dropped, up to its last. */
  private boolean discarding;

  /**
   * A framed SEND with header {@code imm} arrived: whether it begins a fragmented message, its
   * header then declaring the length (no grants, no flags). Called for every SEND with immediate
   * data, in arrival order.
   */
  boolean begins(int imm) {
    if ((imm & Protocol.MORE) != 0) {
      boolean first = !peerInMessage;
      peerInMessage = true;
      return first;
    }
    if ((imm & (Protocol.CREDIT | Protocol.DONE)) == 0) { // credit updates and DONEs may come between fragments
      peerInMessage = false;
    }
    return false;
  }

  /** Whether a SEND with header {@code imm}, taken now, begins a fragmented message (see {@link #begins}). */
  boolean startsMessage(int imm) {
    return (imm & Protocol.MORE) != 0 && reassembler.inProgress() < 0 && !discarding;
  }

  /** Whether a SEND with header {@code imm} is part of a fragmented message (one being dropped included). */
  boolean isFragment(int imm) {
    return reassembler.isFragment(imm) || discarding;
  }

  /** Bytes of the message in reassembly so far, or -1 when none is. */
  long inProgress() {
    return reassembler.inProgress();
  }

  /**
   * A fragment in receive buffer {@code index}: appended, the buffer given back; false, taking
   * nothing, when it begins a message that the budget cannot hold yet. A violation fails the
   * connection and counts as taken.
   */
  boolean take(int index, int length, int imm) {
    if (discarding) {
      buffers.freeReceive(index);
      discarding = (imm & Protocol.MORE) != 0; // its last ends it
      return true;
    }
    if (reassembler.inProgress() < 0) {
      if (connection.failure() != null) { // failing: no new message starts (after a violation its bytes mean nothing)
        buffers.freeReceive(index);
        discarding = true; // a first fragment: the rest of its message goes too
        return true;
      }
      long total = Protocol.declared(imm);
      if (total > maxMessage) {
        return broken(index, "it declared a message of " + total + " bytes, above the maximum of " + maxMessage + " it was told");
      }
      if (reserved + total > budget) {
        return false; // until the subscriber takes what waits for it
      }
      if (!shared.tryReserve(total, connection)) {
        return false; // until other connections' messages go
      }
      reserved += total;
      reassembler.begin((int) total);
    }
    // a first fragment's bytes are all data: its length is in its header (wire protocol v5)
    if (!reassembler.append(buffers.receiveMemory(index), buffers.receiveOffset(index), length)) {
      return broken(index, "it sent more than the " + reassembler.declared() + " bytes its message declared");
    }
    buffers.freeReceive(index);
    counters.bytesReceived(length); // message bytes, as the sender counts them
    counters.bytesCopied(length); // into the message's own memory: each byte once, at its place
    if ((imm & Protocol.MORE) == 0) {
      int missing = reassembler.missing();
      byte[] whole = reassembler.complete();
      if (whole == null) {
        return broken(-1, "its message ended " + missing + " bytes short of the length it declared");
      }
      completed = whole; // its reservation goes when the subscriber takes it
    }
    return true;
  }

  /** The message the last {@link #take} completed, once, or null. */
  byte @Nullable [] takeCompleted() {
    byte[] c = completed;
    completed = null;
    return c;
  }

  /** The peer broke the protocol with a fragment (in buffer {@code index}, or -1 if given back): dropped, with its message. */
  boolean broken(int index, String violation) {
    if (index >= 0) {
      buffers.freeReceive(index);
    }
    dropInProgress();
    discarding = true; // whatever of the message is still to come (the connection has failed: at most one SEND more)
    connection.protocolError(violation);
    return true;
  }

  /** Drops the message in reassembly, and its reservation. */
  void dropInProgress() {
    unreserve(reassembler.declared());
    reassembler.clear();
  }

  /**
   * Reserves {@code n} bytes for a message that arrives another way (a rendezvous, read by RDMA
   * READ), released as a reassembled one's is ({@link #unreserve}); false, reserving nothing, when
   * either budget cannot hold it yet.
   */
  boolean tryReserve(long n) {
    if (budgetReturned || reserved + n > budget || !shared.tryReserve(n, connection)) {
      return false;
    }
    reserved += n;
    return true;
  }

  /** A reassembled message of {@code n} bytes was taken or dropped: its reservation goes. */
  void unreserve(long n) {
    if (budgetReturned) {
      return;
    }
    reserved -= n;
    shared.free(n);
  }

  /**
   * Closing: the reservations go back to the server's total now, not when a subscriber takes the
   * messages: one that never requests nor cancels would otherwise keep them from every other
   * connection after it became garbage. They stay bounded by this connection's own budget.
   */
  void returnBudget() {
    dropInProgress();
    shared.free(reserved);
    reserved = 0;
    budgetReturned = true;
    shared.forget(connection);
  }
}
