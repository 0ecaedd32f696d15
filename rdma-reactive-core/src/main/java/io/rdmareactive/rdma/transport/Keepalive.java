package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * A connection's keepalive (RdmaOption.KEEPALIVE_INTERVAL): every interval without a sign of the
 * peer it has the sender post one probe, a zero-length RDMA WRITE. RC makes the peer's adapter
 * acknowledge it, so a dead peer or path fails it with RETRY_EXC_ERR after the QP's retries,
 * and the connection fails with that. Why a WRITE and not a credit-only SEND: a WRITE consumes no
 * receive and no credit, so it cannot starve the credit protocol of the credit it keeps for
 * updates, and a peer whose application reads nothing (it grants no credits) is still probed.
 *
 * <p>It also watches the sends in flight: a send that makes no progress for a whole interval (sends
 * were outstanding at the last tick and none has completed since) fails the connection. A probe
 * cannot find that peer out, as it queues behind the stuck send on the QP: such a peer, one that
 * promised buffers and posts no receives while the QP retries receiver-not-ready (forever, at
 * RNR retry 7), or a path that lost the peer, would otherwise hold the sends, their buffers and a
 * close for as long as the QP retries.
 *
 * <p>Plain state driven from the connection's drain, bar the timer, which only sets a flag and wakes
 * the drain. The timer is a one-shot on the connection's loop, rescheduled by each tick.
 */
final class Keepalive {
  private final ConnectionOperations connection;
  private final Duration interval;
  private volatile boolean due;
  // Drain state.
  private @Nullable Disposable timer;
  private boolean stopped;
  /** Successful completions (arrivals and acknowledged sends) so far, and at the last tick. */
  private long signs;
  private long signsAtTick;
  /** Acknowledged sends so far, at the last tick, and whether sends were in flight after it. */
  private long sent;
  private long sentAtTick;
  private boolean sendingAtTick;
  private boolean probing;

  /** What a tick asks the drain to do. */
  enum Verdict { NONE, PROBE, STALLED }

  Keepalive(ConnectionOperations connection, Duration interval) {
    this.connection = connection;
    this.interval = interval;
  }

  boolean enabled() {
    return !interval.isZero();
  }

  /** The handshake is done: the first interval starts. */
  void start() {
    if (enabled() && !stopped && timer == null) {
      arm();
    }
  }

  private void arm() {
    timer = connection.schedule(() -> {
      due = true;
      connection.drain();
    }, interval);
  }

  /** A work request completed successfully: the peer is alive. */
  void sign() {
    signs++;
  }

  /** A send (a probe included) was acknowledged: the sends in flight make progress. */
  void sent() {
    signs++;
    sent++;
  }

  /**
   * The probe completed (either way). An acknowledged probe is progress of the sends, not a sign
   * of the peer's application: an idle connection goes on probing each interval.
   */
  void probeCompleted(boolean acknowledged) {
    probing = false;
    if (acknowledged) {
      sent++;
    }
  }

  /**
   * At a tick, what to do: fail the connection when sends were in flight at the last tick and
   * none has been acknowledged since; probe when nothing came from the peer for the whole
   * interval and no probe or other send is outstanding (an outstanding send probes the path
   * already). Re-arms the timer unless stalled.
   *
   * @param sendsOutstanding sends (a probe included) posted and not yet completed
   */
  Verdict tick(int sendsOutstanding) {
    if (!due || stopped) {
      return Verdict.NONE;
    }
    due = false;
    if (sendingAtTick && sent == sentAtTick && sendsOutstanding > 0) {
      return Verdict.STALLED;
    }
    boolean idle = signs == signsAtTick;
    signsAtTick = signs;
    sentAtTick = sent;
    arm();
    if (idle && !probing && sendsOutstanding == 0) {
      probing = true;
      sendingAtTick = true; // the probe now in flight
      return Verdict.PROBE;
    }
    sendingAtTick = sendsOutstanding > 0;
    return Verdict.NONE;
  }

  /** The failure of a connection whose sends stalled: no progress for an interval. */
  ConnectionException stalled() {
    String what = probing ? "the peer did not acknowledge a keepalive within the keepalive interval"
        : "a send made no progress for the keepalive interval";
    return ConnectionOperations.reset(what + " (" + interval.toMillis()
        + " ms, RdmaOption.KEEPALIVE_INTERVAL): the peer or the path to it is gone, or it stopped receiving", null);
  }

  /** Disconnecting: no more ticks (a pending timer would keep the loop's thread alive). */
  void stop() {
    if (!stopped) {
      stopped = true;
      Disposable t = timer;
      if (t != null) {
        t.dispose();
      }
    }
  }
}
