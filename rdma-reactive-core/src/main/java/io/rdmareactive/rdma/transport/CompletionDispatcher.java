package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.WorkCompletionException;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import org.jspecify.annotations.Nullable;

/**
 * A connection's completions, each handed to the part that posted its work request (by the tag in
 * its id, whose format lives here beside its reader), and the one place that decides whether a
 * failed one fails the connection and with what: a flush after a disconnect is the disconnect, one
 * before the handshake is done is the handshake failing. Plain state driven from the connection's
 * drain ({@link CompletionRing#drainTo}); it is the ring's handler itself, so that a completion
 * allocates nothing.
 */
final class CompletionDispatcher implements CompletionRing.Handler, SendDoorbell.Retirement {
  /** Work request ids: a tag in bits 40-47, the buffer index below. */
  static final long RECV = 1L << 40;
  static final long DATA = 2L << 40;
  static final long CREDIT = 3L << 40;
  static final long KEEPALIVE = 4L << 40;
  /** The send that retires the unsignaled end of a partial post (see {@link SendDoorbell}): no part's own. */
  static final long RETIRER = 5L << 40;
  /** A data send gathered from a user's registered memory alone (see {@link RegisteredMessage}): no send buffer. */
  static final long ZERO_COPY = 6L << 40;
  /** A rendezvous: the bind of a memory window to a message, the LOCAL_INV revoking it, a READ pulling one. */
  static final long RNDV_BIND = 7L << 40;
  static final long RNDV_INVALIDATE = 8L << 40;
  static final long RNDV_READ = 9L << 40;
  private static final long TAG = 0xFFL << 40;
  /**
   * The length the ring carries for a successful receive that no SEND filled (an RDMA WRITE with
   * immediate consumed it: the buffer holds nothing of the peer's, only what was there before).
   */
  static final int NOT_A_SEND = Integer.MIN_VALUE;

  private final ConnectionOperations connection;
  private final Endpoint endpoint;
  private final InboundReceiver receiver;
  private final OutboundSender sender;
  private final SendDoorbell doorbell;
  private final Keepalive keepalive;
  private final ConnectionCounters counters;
  private final ConnectionCloser closer;
  private final int bufferSize;
  // Drain state.
  private boolean flushedBeforeStart;

  CompletionDispatcher(ConnectionOperations connection, Endpoint endpoint, InboundReceiver receiver,
      OutboundSender sender, SendDoorbell doorbell, Keepalive keepalive, ConnectionCounters counters,
      ConnectionCloser closer, int bufferSize) {
    this.connection = connection;
    this.endpoint = endpoint;
    this.receiver = receiver;
    this.sender = sender;
    this.doorbell = doorbell;
    this.keepalive = keepalive;
    this.counters = counters;
    this.closer = closer;
    this.bufferSize = bufferSize;
  }

  /**
   * The completion's length as the ring carries it: {@link #NOT_A_SEND} for a successful receive
   * whose opcode is not RECV. The opcode is checked where the completion is read, so that the ring
   * need not carry it.
   */
  static int checkedLength(long wrId, WorkCompletion.Status status, WorkCompletion.Opcode opcode, int byteLength) {
    return (wrId & TAG) == RECV && status == WorkCompletion.Status.SUCCESS && opcode != WorkCompletion.Opcode.RECV
        ? NOT_A_SEND : byteLength;
  }

  /**
   * Whether a receive was flushed before the handshake was done: the QP went to ERROR, so
   * nothing more may be posted, and if the handshake succeeds anyway the connection fails at start.
   */
  boolean flushedBeforeStart() {
    return flushedBeforeStart;
  }

  @Override
  public void onCompletion(long wrId, WorkCompletion.Status status, int byteLength, boolean hasImmediate,
      int immediateData, @Nullable WorkCompletion failed) {
    counters.completionPolled();
    long tag = wrId & TAG;
    boolean success = status == WorkCompletion.Status.SUCCESS;
    if (!success) {
      countError(status);
    }
    if (tag == RECV) {
      if (success && byteLength >= 0 && byteLength <= bufferSize) { // NOT_A_SEND is negative
        keepalive.sign();
        receiver.received((int) wrId, byteLength, hasImmediate, immediateData);
      } else {
        receiveRefused(wrId, status, byteLength, failed);
      }
      return;
    }
    // It retires the unsignaled sends before it too, in order (sendRetired).
    if (!doorbell.completed(wrId, success)) {
      connection.fail(ConnectionOperations.reset("the provider reported a send completion (wr_id " + wrId
          + ") for no send outstanding", null));
      return;
    }
    if (!success) {
      sendFailed(wrId, tag, status, failed);
    }
    sender.acknowledge();
  }

  /** Counts a failed completion as an error unless either end has disconnected, or it is a flush before the handshake is done. */
  private void countError(WorkCompletion.Status status) {
    if (!earlyFlush(status) && up()) {
      counters.completionError(); // flushes after a disconnect are the disconnect, not errors
    }
  }

  /**
   * A flush before the handshake is done is the handshake failing, and establish() says why: on a
   * REJECTED or CONNECT_ERROR librdmacm moves the QP to ERROR inside rdma_get_cm_event, so these
   * flushes can overtake the event. Disconnecting on them would fail establish() with our own
   * RESET before the CM's REFUSED/UNREACHABLE reaches it.
   */
  private boolean earlyFlush(WorkCompletion.Status status) {
    return status == WorkCompletion.Status.WR_FLUSH_ERR && !connection.started();
  }

  /** A receive that failed, or that succeeded with nothing the connection may deliver: its buffer goes back. */
  private void receiveRefused(long wrId, WorkCompletion.Status status, int byteLength, @Nullable WorkCompletion failed) {
    int index = (int) wrId;
    receiver.failed(index); // a failed receive's buffer, or one holding stale bytes: never to the user
    if (status != WorkCompletion.Status.SUCCESS) {
      if (earlyFlush(status)) {
        flushedBeforeStart = true; // the handshake's outcome decides; startLocked if it succeeds anyway
      } else if (up() && connection.failure() == null) {
        connection.fail(status == WorkCompletion.Status.WR_FLUSH_ERR
            ? completionFailure("the queue pair went to the error state", null)
            : completionFailure("a receive failed", new WorkCompletionException(failedRecord(failed, wrId, status))));
      }
    } else if (byteLength == NOT_A_SEND) {
      connection.protocolError("it consumed a receive with an RDMA WRITE with immediate, not a SEND");
    } else {
      connection.fail(ConnectionOperations.reset("the provider reported a receive of " + byteLength
          + " bytes into a buffer of " + bufferSize, null));
    }
  }

  /** A send (retired by now) failed: the connection fails, unless either end has disconnected or it failed already. */
  private void sendFailed(long wrId, long tag, WorkCompletion.Status status, @Nullable WorkCompletion failed) {
    if (status == WorkCompletion.Status.RNR_RETRY_EXC_ERR) {
      counters.receiverNotReady();
    }
    if (tag == RNDV_READ && status != WorkCompletion.Status.WR_FLUSH_ERR && up()) {
      // The peer's descriptor named memory its key does not open: it broke the protocol.
      connection.protocolError("its rendezvous descriptor named memory that an RDMA READ could not read (" + status + ")");
    }
    // A send failing because the peer just disconnected is the disconnect, not a fault.
    if (up() && connection.failure() == null) {
      connection.fail(completionFailure(tag == KEEPALIVE
          ? "the peer did not acknowledge a keepalive (it or the path to it is gone)"
          : "a send failed (the peer is gone or stopped receiving)",
          new WorkCompletionException(failedRecord(failed, wrId, status))));
    }
  }

  @Override
  public void sendRetired(long wrId, boolean success, boolean bufferGone) {
    long tag = wrId & TAG;
    if (tag == RETIRER) {
      return;
    }
    sender.sendCompleted(tag == DATA || tag == ZERO_COPY, bufferGone || tag == ZERO_COPY ? -1 : (int) wrId, success);
    if (tag == RNDV_READ) {
      receiver.rendezvous().readRetired(success);
    } else if (tag == RNDV_BIND || tag == RNDV_INVALIDATE) {
      sender.rendezvous().keyRetired(tag == RNDV_INVALIDATE, success);
    }
    if (tag == KEEPALIVE) {
      keepalive.probeCompleted(success);
    } else if (success) {
      keepalive.sent(); // the peer acknowledged it
    }
  }

  @Override
  public void inlinePosted(long wrId) {
    if ((wrId & TAG) == DATA) {
      sender.inlinePosted((int) wrId);
    }
  }

  /** Neither end has disconnected: a failure now is news, not the disconnect's flush. */
  private boolean up() {
    return !closer.disconnected() && !connection.peerDisconnected();
  }

  /** A failed work request's failure: the fault the provider knows behind it, else a RESET saying {@code what}. */
  private ConnectionException completionFailure(String what, @Nullable WorkCompletionException cause) {
    ConnectionException fault = endpoint.faultBehind(cause);
    return fault != null ? fault : ConnectionOperations.reset(what, cause);
  }

  private static WorkCompletion failedRecord(@Nullable WorkCompletion failed, long wrId, WorkCompletion.Status status) {
    return failed != null ? failed
        : new WorkCompletion(wrId, status, WorkCompletion.Opcode.UNKNOWN, 0, 0, 0, false, 0, 0);
  }
}
