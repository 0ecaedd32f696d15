package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import org.jspecify.annotations.Nullable;

/**
 * Where an endpoint gets the shared receive queue its queue pair takes receives from, when the
 * transport's loops own one per loop and device, shared by the connections on that loop, instead
 * of each queue pair having a receive queue of its own. An endpoint acquires one SRQ when it
 * creates its queue pair and releases it exactly once after that queue pair is destroyed (or when
 * creating it failed); it never closes it.
 */
public interface SharedReceiveQueueSource {
  /**
   * The SRQ for an endpoint whose CQ is on {@code channel} (which names its loop) and whose QP
   * is on {@code pd}; null when there is none for it (the QP then gets a receive queue of its own).
   */
  @Nullable SharedReceiveQueue acquire(CompletionChannel channel, ProtectionDomain pd);

  /** Gives back an SRQ from {@link #acquire}: the endpoint's queue pair is gone (or was never created). */
  void release(SharedReceiveQueue srq);
}
