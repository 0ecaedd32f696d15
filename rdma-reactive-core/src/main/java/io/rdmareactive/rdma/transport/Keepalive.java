package io.rdmareactive.rdma.transport;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * A channel's keepalive (RdmaOption.KEEPALIVE_INTERVAL): every interval without a sign of the
 * peer it has the sender post one probe, a zero-length RDMA WRITE. RC makes the peer's adapter
 * acknowledge it, so a dead peer or path fails it with RETRY_EXC_ERR after the QP's retries,
 * and the channel fails with that. Why a WRITE and not a credit-only SEND: a WRITE consumes no
 * receive and no credit, so it cannot starve the credit protocol of the credit it keeps for
 * updates, and a peer whose application reads nothing (it grants no credits) is still probed.
 *
 * <p>Plain state driven from the channel's drain, bar the timer, which only sets a flag and wakes
 * the drain. The timer is a one-shot on the connection's loop, rescheduled by each tick.
 */
final class Keepalive {
  private final ConnectionOperations channel;
  private final Duration interval;
  private volatile boolean due;
  // Drain state.
  private @Nullable Disposable timer;
  private boolean stopped;
  /** Successful completions (arrivals and acknowledged sends) so far, and at the last tick. */
  private long signs;
  private long signsAtTick;
  private boolean probing;

  Keepalive(ConnectionOperations channel, Duration interval) {
    this.channel = channel;
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
    timer = channel.schedule(() -> {
      due = true;
      channel.drain();
    }, interval);
  }

  /** A work request completed successfully: the peer is alive. */
  void sign() {
    signs++;
  }

  /** The probe completed (either way). */
  void probeCompleted() {
    probing = false;
  }

  /**
   * At a tick, whether a probe should go now: nothing came from the peer for the whole interval
   * and no probe or other send is outstanding (an outstanding send probes the path already).
   * Re-arms the timer either way.
   */
  boolean probeDue(int sendsOutstanding) {
    if (!due || stopped) {
      return false;
    }
    due = false;
    boolean idle = signs == signsAtTick;
    signsAtTick = signs;
    arm();
    if (idle && !probing && sendsOutstanding == 0) {
      probing = true;
      return true;
    }
    return false;
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
