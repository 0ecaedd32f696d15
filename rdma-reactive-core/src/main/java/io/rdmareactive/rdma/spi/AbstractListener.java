package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.ConnectionException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Schedulers;

/**
 * What every provider's {@link Listener} shares: a bounded queue of connect requests with a
 * deadline each ({@link ListenLimits}), handed out to one subscriber as it has demand. A provider
 * {@linkplain #offer offers} each request as it arrives, {@linkplain #withdraw withdraws} one whose
 * initiator gave up, {@linkplain #fail fails} the listener when its device goes, and stops
 * listening in {@link #stopListening()}. Requests carry nothing built for them but the CM's own id,
 * so a full queue, an expired request or a closed listener costs no verbs object.
 *
 * @param <R> the provider's request
 */
public abstract class AbstractListener<R extends AbstractListener.Request> extends AbstractRdmaResource
    implements Listener {
  private final ListenLimits limits;
  private final AtomicBoolean subscribed = new AtomicBoolean();
  // guarded by this
  private final ArrayDeque<R> pending = new ArrayDeque<>();
  private @Nullable FluxSink<ConnectRequest> sink;
  private boolean draining;
  private boolean drainAgain;
  private boolean stopped;
  private @Nullable ConnectionException failure;
  /** The one timer that refuses expired requests, armed for the oldest one's deadline while any waits. */
  private @Nullable Disposable sweep;

  /** A listener named {@code description} (in errors and logs) whose waiting requests {@code limits} bound. */
  protected AbstractListener(String description, ListenLimits limits) {
    super(description, null);
    this.limits = limits;
  }

  @Override
  public final Flux<ConnectRequest> incoming() {
    return Flux.create(s -> {
      if (!subscribed.compareAndSet(false, true)) {
        s.error(new IllegalStateException(this + " already has a subscriber"));
        return;
      }
      synchronized (this) {
        if (failure != null) {
          s.error(failure);
          return;
        }
        if (stopped) {
          s.complete();
          return;
        }
        sink = s;
      }
      s.onDispose(() -> {
        synchronized (this) {
          if (sink == s) {
            sink = null;
          }
        }
      });
      s.onRequest(n -> drain());
    });
  }

  /**
   * A connect request arrived (any thread): it waits for demand, or is rejected at once (with the
   * limits' reject data) when the queue is full or the listener closed or failed.
   */
  protected final void offer(R request) {
    boolean queued;
    synchronized (this) {
      queued = !stopped && failure == null && pending.size() < limits.backlog();
      if (queued) {
        request.deadline = System.nanoTime() + limits.requestTimeout().toNanos();
        pending.add(request);
        if (sweep == null) {
          armSweep(limits.requestTimeout().toNanos());
        }
      }
    }
    if (queued) {
      drain();
    } else {
      request.reject(limits.busyReject());
    }
  }

  /** The initiator of a request gave up: when it still waits here, it is freed (not rejected); true then. */
  protected final boolean withdraw(R request) {
    synchronized (this) {
      if (!pending.remove(request)) {
        return false;
      }
    }
    request.discard(null);
    return true;
  }

  /**
   * The listener can take no more requests (its device went away, say): {@link #incoming()}
   * fails with {@code why}, and waiting requests are rejected. The provider closes the listener later.
   */
  protected final void fail(ConnectionException why) {
    FluxSink<ConnectRequest> s;
    synchronized (this) {
      if (failure != null || stopped) {
        return;
      }
      failure = why;
      s = sink;
      sink = null;
    }
    rejectWaiting();
    if (s != null) {
      s.error(why);
    }
  }

  /** Whether the listener has failed; then {@link #incoming()} errors with it. */
  protected final synchronized boolean failed() {
    return failure != null;
  }

  /** Guarded by this. On bounded-elastic: refusing destroys CM ids, which may wait briefly. */
  private void armSweep(long delayNanos) {
    sweep = Schedulers.boundedElastic().schedule(this::refuseExpired, Math.max(0, delayNanos),
        java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /** Refuses the requests past their deadline (the oldest first: they are queued in arrival order). */
  private void refuseExpired() {
    java.util.List<R> expired = new java.util.ArrayList<>();
    synchronized (this) {
      sweep = null;
      long now = System.nanoTime();
      R head;
      while ((head = pending.peek()) != null && now - head.deadline >= 0) {
        expired.add(pending.poll());
      }
      if (head != null && !stopped) {
        armSweep(head.deadline - now);
      }
    }
    for (R r : expired) {
      r.reject(limits.busyReject());
    }
  }

  /**
   * Hands waiting requests out while there is demand; re-entrant calls loop here instead. Under
   * the lock, so that a close cannot complete the sink between the check and the hand-out (a
   * request handed to a completed sink would be dropped, and leak).
   */
  private synchronized void drain() {
    if (draining) {
      drainAgain = true;
      return;
    }
    draining = true;
    try {
      do {
        drainAgain = false;
        FluxSink<ConnectRequest> s;
        while ((s = sink) != null && s.requestedFromDownstream() > 0 && !stopped) {
          R r = pending.poll();
          if (r == null) {
            break;
          }
          r.handOut();
          if (r.gone()) {
            r.discard(null);
          } else {
            s.next(r);
          }
        }
      } while (drainAgain);
    } finally {
      draining = false;
    }
  }

  private void rejectWaiting() {
    for (;;) {
      R r;
      synchronized (this) {
        r = pending.poll();
      }
      if (r == null) {
        return;
      }
      r.reject(limits.busyReject());
    }
  }

  /** Stops listening, rejects the waiting requests and completes {@link #incoming()}. */
  @Override
  protected final void release() {
    FluxSink<ConnectRequest> s;
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
      s = sink;
      sink = null;
      if (sweep != null) {
        sweep.dispose();
        sweep = null;
      }
    }
    stopListening();
    rejectWaiting();
    if (s != null) {
      s.complete();
    }
    released();
  }

  /** Stops new requests arriving (the listening id is destroyed, the port freed). Runs once. */
  protected abstract void stopListening();

  /** After the waiting requests are rejected and {@link #incoming()} completed: frees what remains. */
  protected void released() {}

  /**
   * A connect request of a provider: nothing built for it but what identifies it. Its state
   * moves once from waiting or handed out to taken (an endpoint built, or rejected, or discarded).
   */
  public abstract static class Request implements ConnectRequest {
    private static final int WAITING = 0;
    private static final int HANDED_OUT = 1;
    private static final int TAKEN = 2;

    private final AtomicInteger state = new AtomicInteger(WAITING);
    private final byte[] privateData;
    private final int retryCount;
    private final int rnrRetry;
    long deadline; // System.nanoTime() after which it is refused; set and read under the listener's lock

    /** A request carrying the initiator's private data and retry counts, as its CM event has them. */
    protected Request(byte[] privateData, int retryCount, int rnrRetry) {
      this.privateData = privateData.clone();
      this.retryCount = retryCount;
      this.rnrRetry = rnrRetry;
    }

    @Override
    public final byte[] privateData() {
      return privateData.clone();
    }

    @Override
    public final int retryCount() {
      return retryCount;
    }

    @Override
    public final int rnrRetry() {
      return rnrRetry;
    }

    /** Builds this request's endpoint; on failure, {@link #discard} follows and the error propagates. */
    protected abstract Endpoint newEndpoint();

    /** Frees this request's CM id (or its provider's equivalent), first rejecting it with {@code rejectWith} unless null. Never blocks long. */
    protected abstract void free(byte @Nullable [] rejectWith);

    /** Whether the initiator gave up already (the request is then discarded, not handed out). */
    protected boolean gone() {
      return false;
    }

    final void handOut() {
      state.compareAndSet(WAITING, HANDED_OUT);
    }

    /** Frees the request without handing it to anyone; false when it was taken already. */
    final boolean discard(byte @Nullable [] rejectWith) {
      int s = state.get();
      while (s != TAKEN) {
        if (state.compareAndSet(s, TAKEN)) {
          free(rejectWith);
          return true;
        }
        s = state.get();
      }
      return false;
    }

    @Override
    public final Endpoint createEndpoint() {
      if (!state.compareAndSet(HANDED_OUT, TAKEN)) {
        throw new IllegalStateException("this connect request was " + (state.get() == TAKEN
            ? "already taken or rejected" : "not handed out"));
      }
      try {
        return newEndpoint();
      } catch (RuntimeException | Error e) {
        free(new byte[0]);
        throw e;
      }
    }

    @Override
    public final void reject(byte[] privateData) {
      if (privateData.length > EndpointOptions.MAX_PRIVATE_DATA) {
        throw new IllegalArgumentException("reject data of " + privateData.length + " bytes exceeds "
            + EndpointOptions.MAX_PRIVATE_DATA);
      }
      discard(privateData);
    }
  }
}
