package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/** A port on the in-memory fabric: queued connect requests, handed out as passive endpoints on demand. */
final class MemConnectionListener extends AbstractRdmaResource implements Listener {
  private final MemConnectionProvider provider;
  private final Fabric fabric;
  private final InetSocketAddress address;
  private final EndpointOptions options;
  private final ConcurrentLinkedQueue<MemConnectionEndpoint.Request> pending = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();
  private final AtomicBoolean subscribed = new AtomicBoolean();
  private volatile @Nullable FluxSink<Endpoint> sink;

  MemConnectionListener(MemConnectionProvider provider, InetSocketAddress address, EndpointOptions options) {
    super("in-memory listener on port " + address.getPort(), null);
    this.provider = provider;
    this.fabric = provider.fabric();
    this.address = address;
    this.options = options;
    fabric.created("listener");
  }

  /** Undoes construction when the port turned out to be taken. */
  void abandonUnbound() {
    close();
  }

  @Override
  public InetSocketAddress boundAddress() {
    return address;
  }

  @Override
  public Flux<Endpoint> incoming() {
    return Flux.create(s -> {
      if (!subscribed.compareAndSet(false, true)) {
        s.error(new IllegalStateException(this + " already has a subscriber"));
        return;
      }
      if (isClosed()) {
        s.complete();
        return;
      }
      sink = s;
      s.onRequest(n -> drain());
      s.onDispose(() -> sink = null);
      if (isClosed()) {
        s.complete();
      }
    });
  }

  /** An initiator's connect request arrived; false when this listener is closed. */
  boolean offer(MemConnectionEndpoint.Request request) {
    if (isClosed()) {
      return false;
    }
    pending.add(request);
    if (isClosed() || fabric.listeners.get(address.getPort()) != this) {
      rejectPending();
      return true;
    }
    drain();
    return true;
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      FluxSink<Endpoint> s = sink;
      while (s != null && s.requestedFromDownstream() > 0 && !isClosed()) {
        MemConnectionEndpoint.Request r = pending.poll();
        if (r == null) {
          break;
        }
        if (!r.isPending()) {
          continue; // its initiator gave up
        }
        MemConnectionEndpoint ep;
        try {
          ep = provider.passive(r, address, options);
        } catch (RuntimeException e) {
          r.reject(new ConnectionException(ConnectionException.Reason.REFUSED,
              "the listener on " + address + " could not create an endpoint: " + e.getMessage(), e));
          continue;
        }
        synchronized (this) { // close() runs release(), which completes the sink, under this lock
          if (!isClosed()) {
            s.next(ep);
            continue;
          }
        }
        ep.reject(new byte[0]); // closed meanwhile: a completed sink would drop it, leaking it; refuse and free it
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  private void rejectPending() {
    MemConnectionEndpoint.Request r;
    while ((r = pending.poll()) != null) {
      r.reject(new ConnectionException(ConnectionException.Reason.REFUSED,
          "connection refused: the listener on " + address + " closed", null));
    }
  }

  @Override
  protected void release() {
    fabric.listeners.remove(address.getPort(), this);
    rejectPending();
    FluxSink<Endpoint> s = sink;
    if (s != null) {
      s.complete();
    }
    fabric.released("listener");
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_id";
  }
}
