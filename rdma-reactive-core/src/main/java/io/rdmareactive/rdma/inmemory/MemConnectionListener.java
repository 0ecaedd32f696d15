package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.AbstractListener;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.ListenLimits;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * A port on the in-memory fabric: connect requests wait in the {@link AbstractListener}'s queue
 * and become passive endpoints only when their taker builds one.
 */
final class MemConnectionListener extends AbstractListener<MemConnectionListener.Pending> {
  private final MemConnectionProvider provider;
  private final Fabric fabric;
  private final InetSocketAddress address;
  private final EndpointOptions options;

  MemConnectionListener(MemConnectionProvider provider, InetSocketAddress address, EndpointOptions options,
      ListenLimits limits) {
    super("in-memory listener on port " + address.getPort(), limits);
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

  /** An initiator's connect request arrived; false when this listener no longer listens. */
  boolean offer(MemConnectionEndpoint.Request request) {
    if (isClosed() || fabric.listeners.get(address.getPort()) != this) {
      return false;
    }
    offer(new Pending(request));
    return true;
  }

  @Override
  protected void stopListening() {
    fabric.listeners.remove(address.getPort(), this);
  }

  @Override
  protected void released() {
    fabric.released("listener");
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_id";
  }

  /** A fabric connect request waiting here: nothing is built for it until {@link #createEndpoint()}. */
  final class Pending extends AbstractListener.Request {
    private final MemConnectionEndpoint.Request request;

    Pending(MemConnectionEndpoint.Request request) {
      super(request.privateData, request.retryCount(), request.rnrRetry());
      this.request = request;
    }

    @Override
    protected boolean gone() {
      return !request.isPending();
    }

    @Override
    protected Endpoint newEndpoint() {
      MemConnectionEndpoint ep = provider.passive(request, address, options);
      fabric.counted("passive-endpoint");
      return ep;
    }

    @Override
    protected void free(byte @Nullable [] rejectWith) {
      if (rejectWith != null) {
        request.reject(new ConnectionException(ConnectionException.Reason.REFUSED,
            "connection refused by the listener on " + address, null), rejectWith);
      } else {
        request.cancel();
      }
    }
  }
}
