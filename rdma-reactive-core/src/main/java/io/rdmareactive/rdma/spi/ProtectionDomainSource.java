package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.ProtectionDomain;
import org.jspecify.annotations.Nullable;

/**
 * Where an endpoint gets the protection domain its queue pair and memory belong to, when the
 * transport's loop resources own one per device, shared by the connections on them, instead of
 * each endpoint allocating its own. An endpoint acquires one PD when it is created and releases
 * it exactly once after its queue pair is destroyed (or when creating the endpoint failed); it
 * never closes it.
 */
public interface ProtectionDomainSource {
  /**
   * The PD for an endpoint on {@code deviceName}, from this provider's
   * {@link ConnectionProvider#allocateProtectionDomain(String)} for that device; null when the
   * provider cannot share one (the endpoint then allocates its own).
   */
  @Nullable ProtectionDomain acquire(String deviceName);

  /** Gives back a PD from {@link #acquire}: the endpoint's queue pair is gone (or was never created). */
  void release(ProtectionDomain pd);
}
