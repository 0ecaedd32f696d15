package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link SendPool}s of one {@link RdmaLoopResources}: one per loop (its completion channel),
 * device (its shared PD) and buffer size, made with the first connection that borrows and closed
 * once the last is gone and every buffer is back.
 */
final class LoopSendPools {
  private final LoopDomains domains;
  private final Function<CompletionChannel, LoopBufferPool.Timer> timers;
  private final Map<List<Object>, SendPool> byKey = new HashMap<>();

  /** Pools on {@code domains}' PDs, each trimmed on the timers of its channel's loop ({@code timers}). */
  LoopSendPools(LoopDomains domains, Function<CompletionChannel, LoopBufferPool.Timer> timers) {
    this.domains = domains;
    this.timers = timers;
  }

  /**
   * The pool a connection on {@code channel} and {@code pd} borrows from, attached; null where
   * {@code pd} is not one of these resources' shared PDs (the connection registers its own).
   */
  synchronized @Nullable SendPool attach(CompletionChannel channel, ProtectionDomain pd, int bufferSize, int maxBuffers) {
    List<Object> key = List.of(channel, pd, bufferSize);
    SendPool pool = byKey.get(key);
    if (pool != null && pool.attach()) {
      return pool;
    }
    byKey.values().removeIf(SendPool::isClosed); // a PD freed and allocated again is another key: forget the old ones
    if (!domains.retain(pd)) {
      return null;
    }
    try {
      pool = new SendPool(pd, bufferSize, maxBuffers, timers.apply(channel), () -> domains.releaseRetained(pd));
    } catch (RuntimeException | Error e) {
      domains.releaseRetained(pd);
      throw e;
    }
    pool.attach();
    byKey.put(key, pool);
    return pool;
  }

  /** Bytes the pools register now. */
  synchronized long registeredBytes() {
    long n = 0;
    for (SendPool p : byKey.values()) {
      n += p.registeredBytes();
    }
    return n;
  }
}
