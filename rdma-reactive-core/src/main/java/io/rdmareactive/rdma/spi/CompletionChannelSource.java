package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.CompletionChannel;

/**
 * Where an endpoint gets the completion channel its CQ attaches to, when the transport's loops
 * own the channels (one per loop and device, shared by many endpoints) instead of each endpoint
 * creating one. An endpoint acquires one channel when it creates its CQ and releases it exactly
 * once after that CQ is destroyed (or when creating the CQ failed); it never closes it.
 */
public interface CompletionChannelSource {
  /**
   * The channel for an endpoint on {@code deviceName}, from this provider's
   * {@link ConnectionProvider#openCompletionChannel(String)} for that device.
   */
  CompletionChannel acquire(String deviceName);

  /** Gives back a channel from {@link #acquire}: its CQ is gone (or was never created). */
  void release(CompletionChannel channel);
}
