package io.rdmareactive.rdma.inmemory;

import reactor.core.publisher.Flux;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.loop.CompletionStreams;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

final class MemCompletionQueue extends AbstractRdmaResource implements CompletionQueue, MemContext.Owned {
  final MemContext context;
  private final Fabric fabric;
  final int handle;
  private final int depth;
  private final @Nullable MemCompletionChannel channel;

  // guarded by fabric.lock
  private final ArrayDeque<MemWorkCompletion> entries = new ArrayDeque<>();
  private boolean overflowed;
  private boolean armed;
  private boolean solicitedOnly;
  private int committed;

  /** Events taken from the channel and not yet acknowledged; guarded by the channel's monitor. */
  int unackedEvents;

  MemCompletionQueue(MemContext context, int depth, @Nullable MemCompletionChannel channel) {
    this(context, depth, channel, context.fabric.nextHandle());
  }

  private MemCompletionQueue(MemContext context, int depth, @Nullable MemCompletionChannel channel, int handle) {
    super("in-memory CQ #" + handle, context);
    this.context = context;
    this.fabric = context.fabric;
    this.handle = handle;
    this.depth = depth;
    this.channel = channel;
    if (channel != null) {
      try {
        channel.acquireLease();
      } catch (RuntimeException e) {
        abandon();
        throw e;
      }
    }
    fabric.created("cq");
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  public int depth() {
    return depth;
  }

  @Override
  public @Nullable CompletionChannel channel() {
    return channel;
  }

  @Override
  public int poll(int max, WorkCompletionHandler handler) {
    ensureOpen();
    if (max < 0) {
      throw new IllegalArgumentException("max must be >= 0, was " + max);
    }
    int n = 0;
    while (n < max) {
      MemWorkCompletion e;
      synchronized (fabric.lock) {
        if (overflowed) {
          throw new RdmaException("CQ overflow: " + this + " (depth " + depth
              + ") lost completions and is in the error state");
        }
        e = entries.poll();
        if (e == null) {
          break;
        }
        if (e.slots != null) {
          e.slots.used -= e.heldSlots;
        }
      }
      n++;
      handler.onCompletion(e); // outside the lock: the handler may post
    }
    return n;
  }

  @Override
  public void requestNotification(boolean solicitedOnly) {
    ensureOpen();
    synchronized (fabric.lock) {
      this.armed = true;
      this.solicitedOnly = solicitedOnly;
    }
  }

  @Override
  public void acknowledgeEvents(int count) {
    ensureOpen();
    if (channel == null) {
      throw new IllegalStateException(this + " has no completion channel, so no events to acknowledge");
    }
    channel.acknowledge(this, count);
  }

  /** Adds a completion. Holds fabric.lock. */
  void add(MemWorkCompletion e) {
    if (overflowed) {
      return;
    }
    if (entries.size() >= depth) {
      overflowed = true;
      armed = false;
      context.emit(new AsyncEvent(AsyncEvent.Type.CQ_ERR, AsyncEvent.Type.CQ_ERR.ordinal(), handle));
      return;
    }
    entries.add(e);
    if (armed && (!solicitedOnly || e.solicited || e.status != WorkCompletion.Status.SUCCESS)) {
      armed = false;
      if (channel != null) {
        channel.signal(this);
      }
    }
  }

  /** Reserves {@code n} entries for a work queue; holds fabric.lock. */
  void commit(int n, String what) {
    if ((long) committed + n > depth) {
      throw new IllegalArgumentException(what + " of " + n + " work requests does not fit in " + this + ": depth "
          + depth + ", already committed " + committed + " (the CQ must be at least as deep as the work queues"
          + " completing into it)");
    }
    committed += n;
  }

  /** Holds fabric.lock. */
  void uncommit(int n) {
    committed -= n;
  }

  /** Unpolled completions (tests and diagnostics). */
  int size() {
    synchronized (fabric.lock) {
      return entries.size();
    }
  }

  @Override
  protected void release() {
    if (channel != null) {
      channel.detach(this);
    }
    synchronized (fabric.lock) {
      entries.clear();
    }
    if (channel != null) {
      channel.releaseLease();
    }
    fabric.released("cq");
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_cq";
  }

  @Override
  public Flux<WorkCompletion> completions(CompletionStreamOptions options) {
    return CompletionStreams.completions(this, options);
  }
}
