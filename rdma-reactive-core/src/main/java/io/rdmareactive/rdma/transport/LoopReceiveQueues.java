package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.UnsupportedByDeviceException;
import io.rdmareactive.rdma.spi.SharedReceiveQueueSource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The {@link ReceivePool}s of one {@link RdmaLoopResources}: one per loop (its completion
 * channel), device (its shared PD) and buffer size, made with the first endpoint that attaches
 * and retired with the last. Endpoints get their SRQ through {@link #source}; their connection
 * finds the pool behind it with {@link #poolOf}.
 */
final class LoopReceiveQueues {
  private static final Logger log = Loggers.getLogger(LoopReceiveQueues.class);

  private final LoopDomains domains;
  private final Function<CompletionChannel, LoopBufferPool.Timer> timers;
  private final Map<List<Object>, ReceivePool> byKey = new HashMap<>();
  private final Map<SharedReceiveQueue, ReceivePool> bySrq = new IdentityHashMap<>();

  /** Pools on {@code domains}' PDs, each trimmed on the timers of its channel's loop ({@code timers}). */
  LoopReceiveQueues(LoopDomains domains, Function<CompletionChannel, LoopBufferPool.Timer> timers) {
    this.domains = domains;
    this.timers = timers;
  }

  /**
   * Where endpoints with buffers of {@code bufferSize} bytes get their SRQ: a pool of at most
   * {@code maxBuffers}, with a headroom of {@code headroom}. It answers null (the QP gets its own
   * receive queue) where the PD is not one of these resources' shared ones or the device has no SRQ.
   */
  SharedReceiveQueueSource source(int bufferSize, int maxBuffers, int headroom) {
    return new SharedReceiveQueueSource() {
      @Override
      public @Nullable SharedReceiveQueue acquire(CompletionChannel channel, ProtectionDomain pd) {
        return LoopReceiveQueues.this.acquire(channel, pd, bufferSize, maxBuffers, headroom);
      }

      @Override
      public void release(SharedReceiveQueue srq) {
        LoopReceiveQueues.this.release(srq);
      }
    };
  }

  /** The pool behind {@code srq}, an SRQ that {@link #source} handed out; null for another. */
  synchronized @Nullable ReceivePool poolOf(SharedReceiveQueue srq) {
    return bySrq.get(srq);
  }

  /** Bytes the pools whose SRQ is alive register now. */
  long registeredBytes() {
    return sum(ReceivePool::registeredBytes);
  }

  /** Receives the pools whose SRQ is alive have posted to refill them, in all. */
  long refills() {
    return sum(ReceivePool::refills);
  }

  /** Receives the pools whose SRQ is alive have posted now, in all. */
  long posted() {
    return sum(ReceivePool::posted);
  }

  private synchronized long sum(java.util.function.ToLongFunction<ReceivePool> count) {
    long n = 0;
    for (ReceivePool p : byKey.values()) {
      n += count.applyAsLong(p);
    }
    return n;
  }

  /** Pools whose SRQ is alive now. */
  synchronized int size() {
    return byKey.size();
  }

  private synchronized @Nullable SharedReceiveQueue acquire(CompletionChannel channel, ProtectionDomain pd,
      int bufferSize, int maxBuffers, int headroom) {
    List<Object> key = List.of(channel, pd, bufferSize);
    ReceivePool pool = byKey.get(key);
    if (pool == null) {
      if (!domains.retain(pd)) {
        return null; // the endpoint's own PD: it goes with the endpoint, so the slab cannot live on it
      }
      try {
        pool = new ReceivePool(pd, bufferSize, maxBuffers, headroom, timers.apply(channel),
            () -> domains.releaseRetained(pd));
      } catch (UnsupportedByDeviceException | UnsupportedOperationException e) {
        domains.releaseRetained(pd);
        log.debug("rdma-reactive: no shared receive queue on " + pd + "; connections keep their own", e);
        return null;
      } catch (RuntimeException | Error e) {
        domains.releaseRetained(pd);
        throw e;
      }
      byKey.put(key, pool);
      bySrq.put(pool.queue(), pool);
    }
    pool.attach();
    return pool.queue();
  }

  private synchronized void release(SharedReceiveQueue srq) {
    ReceivePool pool = bySrq.get(srq);
    if (pool != null && pool.detach()) {
      bySrq.remove(srq);
      byKey.values().remove(pool);
    }
  }
}
