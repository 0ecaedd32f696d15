package io.rdmareactive.spring.boot;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaStatistics;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of the auto-configured server's and clients' connections, tagged
 * {@code endpoint} ({@code server} or the client's name), from each connection's
 * {@link RdmaStatistics}: live connections are read when scraped, closed ones are added up when
 * they close.
 *
 * <ul>
 *   <li>{@code rdma.connections.active} (gauge), {@code rdma.connections} (opened, counter)
 *   <li>{@code rdma.messages}, {@code rdma.bytes}, {@code rdma.credit.updates}: counters tagged
 *       {@code direction=out|in}
 *   <li>{@code rdma.receiver.not.ready}, {@code rdma.credit.violations}: counters of flow-control
 *       failures (0 unless flow control was broken)
 *   <li>{@code rdma.doorbells}, {@code rdma.sends.signaled}, {@code rdma.completions.polled}: what
 *       batching does for the traffic (posts of send lists, sends that asked for a completion,
 *       completions polled)
 *   <li>{@code rdma.bytes.copied}, {@code rdma.bytes.read}: bytes the library copied (into send
 *       buffers, and out of receive buffers when it reassembles), and bytes pulled by RDMA READ
 * </ul>
 */
public class RdmaMetrics implements MeterBinder, RdmaConnectionObserver {
  private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
  private final List<MeterRegistry> registries = new ArrayList<>();

  /** @param endpoints endpoints to register meters for up front (others are added when they connect) */
  public RdmaMetrics(Set<String> endpoints) {
    endpoints.forEach(this::endpoint);
  }

  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    registries.add(registry);
    endpoints.values().forEach(e -> e.register(registry));
  }

  @Override
  public void connected(String endpoint, RdmaConnection connection) {
    endpoint(endpoint).connected(connection);
  }

  @Override
  public void disconnected(String endpoint, RdmaConnection connection) {
    endpoint(endpoint).disconnected(connection);
  }

  private Endpoint endpoint(String name) {
    Endpoint e = endpoints.get(name);
    if (e != null) {
      return e;
    }
    synchronized (this) {
      return endpoints.computeIfAbsent(name, n -> {
        Endpoint created = new Endpoint(n);
        registries.forEach(created::register);
        return created;
      });
    }
  }

  /** One endpoint's live connections and the totals of its closed ones. */
  static final class Endpoint {
    private final String name;
    private final Set<RdmaConnection> live = new HashSet<>();
    private long opened;
    private long messagesSent, messagesReceived, bytesSent, bytesReceived, creditUpdatesSent,
        creditUpdatesReceived, receiverNotReady, creditViolations, creditStalls, completionErrors, flushGiveUps,
        dataSends, doorbells, signaledSends, completionsPolled, bytesCopied, bytesRead;

    Endpoint(String name) {
      this.name = name;
    }

    synchronized void connected(RdmaConnection c) {
      if (live.add(c)) {
        opened++;
      }
    }

    // Under the lock, so a scrape never sees a closed connection both live and in the totals.
    synchronized void disconnected(RdmaConnection c) {
      if (!live.remove(c)) {
        return;
      }
      RdmaStatistics s = c.statistics();
      messagesSent += s.messagesSent();
      messagesReceived += s.messagesReceived();
      bytesSent += s.bytesSent();
      bytesReceived += s.bytesReceived();
      creditUpdatesSent += s.creditUpdatesSent();
      creditUpdatesReceived += s.creditUpdatesReceived();
      receiverNotReady += s.receiverNotReady();
      creditViolations += s.creditViolations();
      creditStalls += s.creditStalls();
      completionErrors += s.completionErrors();
      flushGiveUps += s.flushGiveUps();
      dataSends += s.dataSends();
      doorbells += s.doorbells();
      signaledSends += s.signaledSends();
      completionsPolled += s.completionsPolled();
      bytesCopied += s.bytesCopied();
      bytesRead += s.bytesRead();
    }

    synchronized int active() {
      return live.size();
    }

    synchronized long opened() {
      return opened;
    }

    private synchronized long total(long closed, ToLongFunction<RdmaStatistics> field) {
      long sum = closed;
      for (RdmaConnection c : live) {
        sum += field.applyAsLong(c.statistics());
      }
      return sum;
    }

    void register(MeterRegistry r) {
      Gauge.builder("rdma.connections.active", this, Endpoint::active).tag("endpoint", name)
          .description("Open RDMA connections").register(r);
      Gauge.builder("rdma.memory.registered", this, e -> e.total(0, RdmaStatistics::registeredBytes))
          .tag("endpoint", name).baseUnit("bytes")
          .description("Memory registered (pinned) for the open connections' buffers").register(r);
      FunctionCounter.builder("rdma.connections", this, Endpoint::opened).tag("endpoint", name)
          .description("RDMA connections established").register(r);
      counter(r, "rdma.messages", "out", "Messages sent", e -> e.total(e.messagesSent, RdmaStatistics::messagesSent));
      counter(r, "rdma.messages", "in", "Messages received",
          e -> e.total(e.messagesReceived, RdmaStatistics::messagesReceived));
      counter(r, "rdma.sends", "out", "Data SENDs sent: rdma.messages out per rdma.sends out is the messages per SEND",
          e -> e.total(e.dataSends, RdmaStatistics::dataSends));
      counter(r, "rdma.bytes", "out", "Payload bytes sent", e -> e.total(e.bytesSent, RdmaStatistics::bytesSent));
      counter(r, "rdma.bytes", "in", "Payload bytes received",
          e -> e.total(e.bytesReceived, RdmaStatistics::bytesReceived));
      counter(r, "rdma.credit.updates", "out", "Credit-only messages sent",
          e -> e.total(e.creditUpdatesSent, RdmaStatistics::creditUpdatesSent));
      counter(r, "rdma.credit.updates", "in", "Credit-only messages received",
          e -> e.total(e.creditUpdatesReceived, RdmaStatistics::creditUpdatesReceived));
      counter(r, "rdma.receiver.not.ready", null, "Receiver-not-ready retries exceeded (flow control broken)",
          e -> e.total(e.receiverNotReady, RdmaStatistics::receiverNotReady));
      counter(r, "rdma.credit.violations", null, "Sends posted without a credit (flow control broken)",
          e -> e.total(e.creditViolations, RdmaStatistics::creditViolations));
      counter(r, "rdma.credit.stalls", null, "Times a sender waited for the receiver to grant credits",
          e -> e.total(e.creditStalls, RdmaStatistics::creditStalls));
      counter(r, "rdma.completion.errors", null, "Work completions with an error status",
          e -> e.total(e.completionErrors, RdmaStatistics::completionErrors));
      counter(r, "rdma.close.flush.give.ups", null, "Closes that stopped waiting for their flush completions",
          e -> e.total(e.flushGiveUps, RdmaStatistics::flushGiveUps));
      counter(r, "rdma.doorbells", null, "Posts of send work-request lists (one ibv_post_send each)",
          e -> e.total(e.doorbells, RdmaStatistics::doorbells));
      counter(r, "rdma.sends.signaled", null, "Send work requests that asked for a completion",
          e -> e.total(e.signaledSends, RdmaStatistics::signaledSends));
      counter(r, "rdma.completions.polled", null, "Work completions polled, sends and receives",
          e -> e.total(e.completionsPolled, RdmaStatistics::completionsPolled));
      counter(r, "rdma.bytes.copied", null, "Bytes the library copied: into send buffers, out of receive buffers to reassemble",
          e -> e.total(e.bytesCopied, RdmaStatistics::bytesCopied));
      counter(r, "rdma.bytes.read", null, "Bytes pulled from peers by RDMA READ",
          e -> e.total(e.bytesRead, RdmaStatistics::bytesRead));
    }

    private void counter(MeterRegistry r, String meter, @Nullable String direction, String description,
        ToLongFunction<Endpoint> value) {
      FunctionCounter.Builder<Endpoint> b = FunctionCounter.builder(meter, this, value::applyAsLong)
          .tag("endpoint", name).description(description);
      if (direction != null) {
        b.tag("direction", direction);
      }
      b.register(r);
    }
  }
}
