package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.Endpoint;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A connection's close sequence: disconnect (failing what cannot be sent), wait for the flush
 * completions of everything still posted, then free the registered memory and the endpoint and
 * complete {@link ConnectionOperations#onDispose()}. Plain state driven from the connection's drain, bar the
 * timers, which only set a flag or free. The timers run on the connection's loop
 * ({@link ConnectionOperations#schedule}), not on a shared Reactor scheduler, so that a close costs no
 * thread hop and a busy {@code parallel} pool cannot delay it.
 *
 * <p>Deadlines: a dispose waits at most the close timeout for the sends already posted, then
 * disconnects anyway (they fail with {@code ConnectionException(TIMED_OUT)}); after the
 * disconnect, at most {@link #FLUSH_WAIT_SECONDS} for their flush completions.
 */
final class ConnectionCloser {
  private static final Logger log = Loggers.getLogger(ConnectionOperations.class); // the connection's logger, as before the split
  private static final int CLOSE_RETRIES = 5_000;
  /**
   * How long a disconnected connection waits for the flush completions of what it still had posted
   * before it frees everything anyway. The QP is in ERROR by then, so the device no longer touches
   * the buffers; the wait only keeps the accounting exact. It bounds a close on a provider that
   * fails to flush (none seen since the deadline polls the CQ before giving up: a loop that was
   * behind had taken unread completions for missing ones): a close must never hang.
   */
  static final long FLUSH_WAIT_SECONDS = 10;
  private final ConnectionCounters counters;

  private final ConnectionOperations connection;
  private final Endpoint endpoint;
  private final RegisteredBuffers buffers;
  private final CompletionRing ring;
  private final OutboundSender sender;
  private final InboundReceiver receiver;
  private final Duration closeTimeout;
  private final Sinks.Empty<Void> disposed = Sinks.empty();
  private volatile boolean completionsDead;
  private volatile boolean closeTimeoutPassed;
  private volatile boolean flushWaitPassed;
  private @Nullable Disposable closeTimer;
  private @Nullable Disposable flushTimer;
  private volatile boolean closedFlag;
  // Drain state.
  private boolean disconnected;
  private boolean closed;
  /** On a shared receive queue: the CQ was polled once more after the disconnect (see closeIfDue). */
  private boolean polledAfterDisconnect;
  private @Nullable Throwable sendError;

  ConnectionCloser(ConnectionOperations connection, Endpoint endpoint, RegisteredBuffers buffers, CompletionRing ring,
      OutboundSender sender, InboundReceiver receiver, ConnectionCounters counters, Duration closeTimeout) {
    this.counters = counters;
    this.connection = connection;
    this.closeTimeout = closeTimeout;
    this.endpoint = endpoint;
    this.buffers = buffers;
    this.ring = ring;
    this.sender = sender;
    this.receiver = receiver;
  }

  boolean disconnected() {
    return disconnected;
  }

  boolean closed() {
    return closed;
  }

  /** Any thread: whether everything is freed (or given up on). */
  boolean isClosed() {
    return closedFlag;
  }

  Mono<Void> onDispose() {
    return disposed.asMono();
  }

  /** Any thread: the loop stopped polling the CQ (it failed), so no flush completion is still to come. */
  void completionsEnded() {
    completionsDead = true;
  }

  /**
   * The drain keeps failing (a callback throwing at every pass): frees everything now, without
   * waiting for flush completions, as the flush deadline would. The peer is disconnected first,
   * so the device has stopped with the buffers before they go.
   */
  void abandon() {
    if (closed) {
      return;
    }
    if (!disconnected) {
      disconnected = true;
      sendError = connection.failure();
      disconnectQuietly();
    }
    closed = true;
    completionsDead = true;
    dispose(closeTimer);
    dispose(flushTimer);
    try {
      Throwable e = sendError();
      sender.abandon(e);
      sender.failUnacknowledged(e); // the device has stopped: no send still to complete will
    } catch (RuntimeException ex) {
      log.debug("rdma-reactive: a send's subscriber threw as " + connection + " was abandoned", ex);
    }
    connection.cancelCompletions();
    buffers.deregister();
    releaseRendezvous();
    free(0);
  }

  /**
   * Disconnects once failed, disconnected by the peer, or disposed with no send outstanding (or
   * with some, once the close timeout has passed).
   */
  void disconnectIfDue() {
    if (!disconnected && (connection.failure() != null || connection.peerDisconnected() || connection.disposeRequested())) {
      disconnectNow(); // apart: the drain runs the check above each pass, and this seldom
    }
  }

  /** Disconnects now: failed, disconnected by the peer, or disposed (see {@link #disconnectIfDue}). */
  private void disconnectNow() {
    Throwable f = connection.failure();
    boolean peerGone = connection.peerDisconnected();
    boolean local = connection.disposeRequested();
    // A rendezvous in either direction is a send outstanding too: a DONE owed, or one awaited.
    int outstanding = sender.sendsOutstanding() + sender.rendezvous().outstanding();
    if (f == null && !peerGone) {
      if (!local) {
        return;
      }
      if (outstanding > 0 && !closeTimeoutPassed) {
        if (closeTimer == null) {
          closeTimer = connection.schedule(() -> {
            closeTimeoutPassed = true;
            connection.drain();
          }, closeTimeout);
        }
        return;
      }
    }
    disconnected = true;
    dispose(closeTimer);
    if (f != null) {
      sendError = f;
      receiver.fail(f);
    } else if (peerGone && (!local || outstanding > 0)) {
      // Also while a local dispose waits on its sends: the peer's disconnect ended that wait, not the timeout.
      sendError = ConnectionOperations.reset("the peer disconnected", null);
    } else if (outstanding > 0) {
      sendError = new ConnectionException(ConnectionException.Reason.TIMED_OUT, connection + " was disposed with "
          + outstanding + " sends the peer had not acknowledged within the close timeout of " + closeTimeout
          + "; disconnected anyway", null);
      log.warn("rdma-reactive: " + sendError.getMessage());
    } else {
      sendError = new ResourceClosedException(connection.toString());
    }
    try {
      sender.abandon(sendError());
      // Sources wholly posted (SourceAcks) succeed or fail by their sends' completions, still to come.
    } finally { // also when a send's subscriber threw: this runs once, so the rest must not be skipped
      disconnectEndpoint();
    }
  }

  /** The disconnect proper, and the deadline for the flush completions it brings. */
  private void disconnectEndpoint() {
    disconnectQuietly();
    flushTimer = connection.schedule(() -> {
      flushWaitPassed = true;
      // Timers run before the loop reads its CQ events: a loop that is behind must not take
      // completions it has not read yet for missing ones.
      connection.pollNow();
      connection.drain();
    }, Duration.ofSeconds(FLUSH_WAIT_SECONDS));
  }

  /** Disconnects the endpoint; a failure to is logged, as the close goes on regardless. */
  private void disconnectQuietly() {
    try {
      endpoint.disconnect();
    } catch (RuntimeException ex) {
      log.debug("rdma-reactive: disconnecting " + connection + " failed", ex);
    }
  }

  private static void dispose(@Nullable Disposable timer) {
    if (timer != null) {
      timer.dispose();
    }
  }

  /** Why sends fail from now on. */
  Throwable sendError() {
    Throwable e = sendError;
    return e != null ? e : new ResourceClosedException(connection.toString());
  }

  /** Once disconnected and every work request completed (or given up on), frees everything. */
  void closeIfDue() {
    if (disconnected && !closed) {
      closeNow(); // apart: the drain runs the check above each pass, and this seldom
    }
  }

  /** Disconnected and not closed: frees everything once every work request completed or was given up on. */
  private void closeNow() {
    if ((receiver.posted() > 0 || sender.sendsOutstanding() > 0) && !completionsDead) {
      if (!flushWaitPassed) {
        return; // the flush completions are on their way
      }
      log.warn("rdma-reactive: " + connection + " saw not all flush completions within " + FLUSH_WAIT_SECONDS
          + " s of its disconnect (" + receiver.posted() + " receives, " + sender.sendsOutstanding()
          + " sends); freeing it anyway");
      completionsDead = true;
      counters.flushGiveUp();
    }
    if (buffers.isShared() && !polledAfterDisconnect && !completionsDead) {
      // Receives of the loop's SRQ that the peer's SENDs took before the disconnect have their
      // completions on our CQ and nowhere else: they are read once more, so that their buffers
      // go back to the pool, before the CQ goes with the endpoint.
      polledAfterDisconnect = true;
      if (connection.pollNow()) {
        connection.drain();
        return;
      }
    }
    if (!receiver.closing() && !flushWaitPassed) {
      // Its subscriber is inside onSubscribe: the drain its subscribe makes comes back here, so
      // that the subscriber gets the end before onDispose. Bounded as the flush wait is.
      return;
    }
    closed = true;
    dispose(flushTimer);
    try {
      sender.failUnacknowledged(sendError());
    } finally { // also when a send's subscriber threw: this runs once, so nothing may stay unfreed
      freeAll();
    }
  }

  /** Closing, the sources ended: frees the buffers, the keys and the endpoint, and tells the subscriber. */
  private void freeAll() {
    // What waits for the subscriber moves off the registered memory, which goes now.
    receiver.rescue(connection.peerDisconnected() && !connection.disposeRequested() && connection.failure() == null);
    connection.cancelCompletions();
    buffers.deregister();
    releaseRendezvous();
    try {
      receiver.emit(closed); // before onDispose, which cancels a server's handler
    } finally {
      free(0); // also when the subscriber throws from its last signal
    }
  }

  /**
   * Frees the endpoint, and the arena once no view over it is held; retried while the loop still
   * leases the CQ.
   */
  private void free(int attempt) {
    try {
      endpoint.close();
      sender.releaseRegistered(); // the QP is gone with it: the device reads no user memory any more
    } catch (ResourceBusyException e) {
      if (attempt < CLOSE_RETRIES) {
        connection.schedule(() -> free(attempt + 1), Duration.ofMillis(1));
        return;
      }
      log.error("rdma-reactive: could not free the endpoint of " + connection, e);
    } catch (RuntimeException e) {
      log.error("rdma-reactive: could not free the endpoint of " + connection, e);
    }
    try {
      buffers.freeWhenUnused(); // views the user still holds keep the memory until their release
    } catch (RuntimeException e) {
      log.error("rdma-reactive: could not free the buffers of " + connection, e);
    }
    closedFlag = true;
    disposed.tryEmitEmpty();
  }

  /**
   * The rendezvous' keys, registrations and READ targets go with the buffers' registrations, and
   * for the same reason: the queue pair is disconnected and its work requests are done, and they
   * must go before the endpoint, whose close may free the protection domain they are on.
   */
  private void releaseRendezvous() {
    try {
      sender.rendezvous().releaseAll();
    } finally {
      receiver.rendezvous().close();
    }
  }

  /** Closed: drops whatever still arrives. */
  void discardInputs() {
    ring.discard();
    buffers.discardReleased();
    SendSource s;
    while ((s = sender.intake.pollNew()) != null) {
      if (s.publisher != null) {
        s.fail(sendError());
      }
    }
  }
}
