package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import java.time.Duration;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * Events are queued CQ references, as the kernel queues them on a channel's file. Its own monitor
 * (never held together with fabric.lock in the other order) guards the queue and the CQs'
 * unacknowledged-event counts.
 */
final class MemCompletionChannel extends AbstractRdmaResource implements CompletionChannel, MemContext.Owned {
  final MemContext context;
  private final Fabric fabric;
  private final Object monitor = new Object();
  private final ArrayDeque<MemCompletionQueue> pending = new ArrayDeque<>();
  private boolean woken;
  /** Whether closing this closes its context too (a shared channel on a context of its own). */
  private final boolean ownsContext;

  MemCompletionChannel(MemContext context) {
    this(context, false);
  }

  private MemCompletionChannel(MemContext context, boolean ownsContext) {
    // A shared channel holds no lease on its context: it closes the context itself, after it.
    super("in-memory completion channel #" + context.fabric.nextHandle(), ownsContext ? null : context);
    this.context = context;
    this.fabric = context.fabric;
    this.ownsContext = ownsContext;
    fabric.created("channel");
  }

  /**
   * A channel that the CQs of every endpoint on {@code device} may share (endpoint contexts stand
   * for librdmacm's one context per device), on a context of its own that closing it closes.
   */
  static MemCompletionChannel shared(InMemoryProvider.DeviceSpec device) {
    MemContext ctx = new MemContext(device);
    try {
      return new MemCompletionChannel(ctx, true);
    } catch (RuntimeException e) {
      ctx.close();
      throw e;
    }
  }

  boolean sharable() {
    return ownsContext;
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  public boolean awaitEvent(Duration timeout) {
    ensureOpen();
    long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
    synchronized (monitor) {
      try {
        while (pending.isEmpty() && !woken && !isClosed()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            break;
          }
          monitor.wait(left / 1_000_000, (int) (left % 1_000_000));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      woken = false;
      return !pending.isEmpty();
    }
  }

  @Override
  public @Nullable CompletionQueue nextEvent() {
    ensureOpen();
    synchronized (monitor) {
      MemCompletionQueue cq = pending.poll();
      if (cq != null) {
        cq.unackedEvents++;
      }
      return cq;
    }
  }

  @Override
  public void wakeup() {
    synchronized (monitor) {
      woken = true;
      monitor.notifyAll();
    }
  }

  /** An armed CQ got a completion. */
  void signal(MemCompletionQueue cq) {
    synchronized (monitor) {
      pending.add(cq);
      monitor.notifyAll();
    }
  }

  void acknowledge(MemCompletionQueue cq, int count) {
    synchronized (monitor) {
      if (count < 0 || count > cq.unackedEvents) {
        throw new IllegalArgumentException("cannot acknowledge " + count + " events of " + cq + ": "
            + cq.unackedEvents + " are unacknowledged");
      }
      cq.unackedEvents -= count;
    }
  }

  /** Before a CQ is destroyed: fails while it has unacknowledged events, and drops its pending ones. */
  void detach(MemCompletionQueue cq) {
    synchronized (monitor) {
      if (cq.unackedEvents > 0) {
        // ibv_destroy_cq would wait for these forever; fail instead.
        throw new ResourceBusyException("ibv_destroy_cq", NativeCallException.EBUSY,
            NativeCallException.describe(NativeCallException.EBUSY),
            cq + " has " + cq.unackedEvents + " unacknowledged event(s); acknowledgeEvents first");
      }
      pending.removeIf(c -> c == cq);
    }
  }

  @Override
  protected void release() {
    synchronized (monitor) {
      monitor.notifyAll(); // a concurrent awaitEvent returns rather than sleeping on a dead channel
    }
    fabric.released("channel");
    if (ownsContext) {
      context.close();
    }
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_comp_channel";
  }
}
