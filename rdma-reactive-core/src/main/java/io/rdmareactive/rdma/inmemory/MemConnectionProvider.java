package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.ListenLimits;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Connection establishment on the in-memory fabric. Listeners are the fabric's and keyed by port
 * alone: every resolved address reaches this process, so the host only has to resolve (an
 * unresolved one fails with UNRESOLVED) and nothing is ever UNREACHABLE. Each endpoint opens a
 * context of its own on the provider's first device and closes it with itself. Connecting to a
 * port nobody listens on is REFUSED at {@link Endpoint#establish}, as a CM reject would be; a
 * listener whose {@link Listener#incoming()} has no demand leaves requests pending, so their
 * initiators time out.
 */
final class MemConnectionProvider implements ConnectionProvider {
  private final InMemoryProvider.DeviceSpec device;
  private final Fabric fabric;

  MemConnectionProvider(InMemoryProvider.DeviceSpec device) {
    this.device = device;
    this.fabric = device.fabric();
  }

  Fabric fabric() {
    return fabric;
  }

  @Override
  public Listener listen(InetSocketAddress address, EndpointOptions options, ListenLimits limits) {
    checkResolved(address);
    if (address.getPort() != 0) {
      MemConnectionListener l = new MemConnectionListener(this, address, options, limits);
      if (fabric.listeners.putIfAbsent(address.getPort(), l) != null) {
        l.abandonUnbound();
        throw new ConnectionException(ConnectionException.Reason.ADDRESS_IN_USE,
            "rdma_bind_addr failed: address " + address + " is already in use", null);
      }
      return l;
    }
    for (;;) {
      int port = fabric.nextPort();
      InetSocketAddress bound = new InetSocketAddress(address.getAddress(), port);
      MemConnectionListener l = new MemConnectionListener(this, bound, options, limits);
      if (fabric.listeners.putIfAbsent(port, l) == null) {
        return l;
      }
      l.abandonUnbound();
    }
  }

  @Override
  public Mono<Endpoint> connect(InetSocketAddress address, EndpointOptions options, Duration timeout) {
    return Mono.<Endpoint>fromCallable(() -> {
      checkResolved(address);
      return MemConnectionEndpoint.active(device, address, options);
    }).doOnDiscard(MemConnectionEndpoint.class, MemConnectionEndpoint::close); // made, but cancelled meanwhile
  }

  @Override
  public CompletionChannel openCompletionChannel(String deviceName) {
    checkDevice(deviceName);
    return MemCompletionChannel.shared(device);
  }

  @Override
  public ProtectionDomain allocateProtectionDomain(String deviceName) {
    checkDevice(deviceName);
    return MemProtectionDomain.onOwnContext(device);
  }

  private void checkDevice(String deviceName) {
    if (!device.name().equals(deviceName)) {
      throw new IllegalArgumentException("no in-memory device '" + deviceName + "' (this provider serves "
          + device.name() + ")");
    }
  }

  MemConnectionEndpoint passive(MemConnectionEndpoint.Request request, InetSocketAddress local,
      EndpointOptions options) {
    return MemConnectionEndpoint.passive(device, local, options, request);
  }

  private static void checkResolved(InetSocketAddress address) {
    if (address.isUnresolved()) {
      throw new ConnectionException(ConnectionException.Reason.UNRESOLVED,
          "rdma_getaddrinfo failed: cannot resolve " + address.getHostString(), null);
    }
  }
}
