package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.List;

/**
 * A verbs implementation, found through {@link java.util.ServiceLoader}. The native module
 * provides {@code native}; core provides {@code in-memory}.
 */
public interface RdmaProvider {
  /** {@code native}, {@code in-memory}, ... */
  String name();

  /** Whether this provider can open at least one device here (native: libraries load and a device exists). */
  boolean isAvailable();

  /** Devices this provider sees; empty when none (never fails for want of devices). */
  List<DeviceInfo> devices();

  /** Opens {@code deviceName}. */
  RdmaContext open(String deviceName);

  /**
   * Connection establishment (the RDMA CM's role) for the transport.
   *
   * @throws UnsupportedOperationException when this provider has none
   */
  default ConnectionProvider connections() {
    throw new UnsupportedOperationException("provider '" + name() + "' does not establish connections");
  }

  /** A device as listed by a provider. */
  record DeviceInfo(String name, long guid, String provider) {}
}
