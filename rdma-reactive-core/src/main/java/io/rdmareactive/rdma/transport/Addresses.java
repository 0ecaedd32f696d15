package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import reactor.netty.transport.AddressUtils;

/** The one place host strings become socket addresses (Reactor Netty's AddressUtils underneath). */
final class Addresses {
  private Addresses() {}

  static void checkPort(int port) {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("port must be 0 .. 65535, was " + port);
    }
  }

  /** Resolves {@code host} (blocking: DNS); fails with UNRESOLVED when it does not resolve. */
  static InetSocketAddress resolve(String host, int port) {
    InetSocketAddress a;
    try {
      a = AddressUtils.createResolved(host, port);
    } catch (RuntimeException e) {
      throw unresolved(host, e);
    }
    if (a.isUnresolved()) {
      throw unresolved(host, null);
    }
    return a;
  }

  private static ConnectionException unresolved(String host, @Nullable Throwable cause) {
    return new ConnectionException(ConnectionException.Reason.UNRESOLVED, "cannot resolve host '" + host + "'", cause);
  }
}
