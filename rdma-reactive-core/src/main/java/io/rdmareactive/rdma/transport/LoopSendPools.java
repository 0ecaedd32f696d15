package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The {@link SendPool}s of one {@link RdmaLoopResources}: one per loop (its completion channel),
 * device (its shared PD) and buffer size, made with the first connection that borrows and closed
 * once the last is gone and every buffer is back. A loop's first connections may keep send buffers
 * of their own instead ({@link RdmaOption#LOOP_PRIVATE_CONNECTIONS}).
 */
final class LoopSendPools {
  private final LoopDomains domains;
  private final Function<CompletionChannel, LoopBufferPool.Timer> timers;
  private final ToIntFunction<CompletionChannel> users;
  private final Map<List<Object>, SendPool> byKey = new HashMap<>();

  /**
   * Pools on {@code domains}' PDs, each trimmed on the timers of its channel's loop ({@code timers});
   * {@code users} counts the endpoints on a channel.
   */
  LoopSendPools(LoopDomains domains, Function<CompletionChannel, LoopBufferPool.Timer> timers,
      ToIntFunction<CompletionChannel> users) {
    this.domains = domains;
    this.timers = timers;
    this.users = users;
  }

  /**
   * The pool a connection on {@code channel} and {@code pd} borrows from, attached; null (the
   * connection registers its own) where {@code pd} is not one of these resources' shared PDs, or
   * where the loop serves at most {@code privateConnections} endpoints on that channel, this one
   * included. Decided once, as the connection opens: so no more than that many of a loop's
   * connections keep their own at once, each having been among that many when it opened.
   */
  synchronized @Nullable SendPool attach(CompletionChannel channel, ProtectionDomain pd, int bufferSize, int maxBuffers,
      int privateConnections) {
    int n = privateConnections == 0 ? 0 : users.applyAsInt(channel);
    if (n > 0 && n <= privateConnections) {
      return null; // one of the loop's first connections: send buffers of its own
    }
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
