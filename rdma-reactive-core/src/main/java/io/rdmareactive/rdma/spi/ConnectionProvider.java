package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Connection establishment, as librdmacm does it (rdma_getaddrinfo, rdma_create_ep, rdma_listen,
 * rdma_get_request, rdma_accept, rdma_connect, rdma_disconnect): what the transport
 * ({@code io.rdmareactive.rdma.transport}) is built on. Addresses reach providers resolved.
 *
 * <p>Failures are {@link io.rdmareactive.rdma.ConnectionException}s with a reason:
 * ADDRESS_IN_USE (listen on a port in use), UNRESOLVED (an unresolved address, or no RDMA device
 * for it), REFUSED, UNREACHABLE, TIMED_OUT.
 */
public interface ConnectionProvider {
  /**
   * Binds and listens at {@code address} (port 0: any free port). Endpoints built for its requests
   * are created with {@code options}, whose private data goes out with each accept; requests wait
   * for demand within {@code limits}.
   */
  Listener listen(InetSocketAddress address, EndpointOptions options, ListenLimits limits);

  /** {@link #listen(InetSocketAddress, EndpointOptions, ListenLimits)} with {@link ListenLimits#DEFAULTS}. */
  default Listener listen(InetSocketAddress address, EndpointOptions options) {
    return listen(address, options, ListenLimits.DEFAULTS);
  }

  /**
   * Resolves {@code address} and a route to it within {@code timeout} and creates an endpoint for
   * it (rdma_create_ep): QP in INIT, not yet connected; {@link Endpoint#establish} connects it,
   * sending {@code options}' private data. Nothing is created before subscription; cancelling
   * frees what was. Past {@code timeout} it fails with TIMED_OUT: the transport puts no timeout of
   * its own on this step (one would drop an endpoint made as it fired).
   */
  Mono<Endpoint> connect(InetSocketAddress address, EndpointOptions options, Duration timeout);

  /**
   * Opens a completion channel on the device context this provider's endpoints for
   * {@code deviceName} use (librdmacm shares one per device and process), for the transport's
   * loops to share among many endpoints through {@link EndpointOptions#channels()}. The caller
   * closes it after the last CQ on it is gone.
   *
   * @throws UnsupportedOperationException when this provider's endpoints cannot share channels
   */
  default CompletionChannel openCompletionChannel(String deviceName) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot share completion channels");
  }

  /**
   * Allocates a protection domain on the device context this provider's endpoints for
   * {@code deviceName} use, for the transport's loop resources to share among many endpoints
   * (and their users to register memory on) through {@link EndpointOptions#domains()}. Closing it
   * frees what it holds of the device too; the caller closes it after the last QP and memory
   * region on it are gone.
   *
   * @throws UnsupportedOperationException when this provider's endpoints cannot share a PD
   */
  default ProtectionDomain allocateProtectionDomain(String deviceName) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot share protection domains");
  }
}
