package io.rdmareactive.spring.boot;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of the loops' registered memory, which the connections on them share (issue
 * 21): {@code rdma.loop.memory.registered} (gauge, bytes, tagged {@code buffers=receive|send}: the
 * shared receive queues' slabs and the send pools), {@code rdma.loop.receive.queues} (gauge: shared
 * receive queues alive), {@code rdma.loop.receive.posted} (gauge: their depth), {@code
 * rdma.loop.receive.refills} (counter: receives posted to refill them) and {@code
 * rdma.loop.endpoints} (gauge: endpoints on the loops). A connection's own {@code
 * rdma.memory.registered} leaves these out.
 */
public class RdmaLoopMetrics implements MeterBinder {
  private final Supplier<@Nullable RdmaLoopResources> loops;

  /** @param loops the loop resources the auto-configured transports run on, read at each scrape */
  public RdmaLoopMetrics(Supplier<@Nullable RdmaLoopResources> loops) {
    this.loops = loops;
  }

  private long read(ToLongFunction<RdmaLoopResources> field) {
    RdmaLoopResources l = loops.get();
    return l == null ? 0 : field.applyAsLong(l);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Gauge.builder("rdma.loop.memory.registered", this, m -> m.read(RdmaLoopResources::registeredReceiveBytes))
        .tag("buffers", "receive").baseUnit("bytes")
        .description("Memory registered (pinned) by the loops' shared receive queues").register(registry);
    Gauge.builder("rdma.loop.memory.registered", this, m -> m.read(RdmaLoopResources::registeredSendBytes))
        .tag("buffers", "send").baseUnit("bytes")
        .description("Memory registered (pinned) by the loops' send pools").register(registry);
    Gauge.builder("rdma.loop.receive.queues", this, m -> m.read(RdmaLoopResources::sharedReceiveQueueCount))
        .description("Shared receive queues alive (one per loop, device and buffer size in use)").register(registry);
    Gauge.builder("rdma.loop.receive.posted", this, m -> m.read(RdmaLoopResources::receiveQueueDepth))
        .description("Receives posted on the shared receive queues alive: their depth").register(registry);
    Gauge.builder("rdma.loop.endpoints", this, m -> m.read(RdmaLoopResources::endpointCount))
        .description("Endpoints (connections, and those being made or closed) on the loops").register(registry);
    FunctionCounter.builder("rdma.loop.receive.refills", this, m -> m.read(RdmaLoopResources::receiveQueueRefills))
        .description("Receives posted to refill the shared receive queues alive").register(registry);
  }
}
