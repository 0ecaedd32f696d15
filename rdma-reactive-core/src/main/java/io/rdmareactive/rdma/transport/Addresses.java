package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * The one place host strings become socket addresses. The JDK's resolver: an IP literal is parsed
 * without DNS, a name is looked up (core needs nothing of Reactor Netty for this, so it does not
 * bring Netty onto a user's classpath).
 */
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
      a = new InetSocketAddress(host, port);
    } catch (RuntimeException e) { // SecurityException, or IllegalArgumentException for a bad host string
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
