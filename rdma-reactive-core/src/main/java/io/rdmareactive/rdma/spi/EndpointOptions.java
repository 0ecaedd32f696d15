package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import org.jspecify.annotations.Nullable;

/**
 * What an {@link Endpoint}'s queue pair is created with, and the private data this side sends in
 * the connection handshake (a connect request's, or a listener's accept reply; librdmacm allows
 * 56 and 196 bytes respectively on InfiniBand/RoCE, so keep it within 56).
 *
 * @param sendQueueDepth send work requests the QP must hold
 * @param receiveQueueDepth receive work requests the QP must hold
 * @param maxInlineData inline bytes the QP must accept (0: none)
 * @param privateData handshake private data this side sends
 * @param channels where the endpoint's CQ gets its completion channel; null: the endpoint creates
 *     and owns a channel of its own
 */
public record EndpointOptions(int sendQueueDepth, int receiveQueueDepth, int maxInlineData, byte[] privateData,
    @Nullable CompletionChannelSource channels) {
  /** Longest private data accepted: rdma_connect's limit on InfiniBand/RoCE. */
  public static final int MAX_PRIVATE_DATA = 56;

  public EndpointOptions {
    if (sendQueueDepth < 1 || receiveQueueDepth < 1) {
      throw new IllegalArgumentException("queue depths must be >= 1, were " + sendQueueDepth + "/" + receiveQueueDepth);
    }
    if (maxInlineData < 0) {
      throw new IllegalArgumentException("maxInlineData must be >= 0, was " + maxInlineData);
    }
    if (privateData.length > MAX_PRIVATE_DATA) {
      throw new IllegalArgumentException("private data of " + privateData.length + " bytes exceeds "
          + MAX_PRIVATE_DATA);
    }
    privateData = privateData.clone();
  }

  /** Options whose endpoint creates a completion channel of its own. */
  public EndpointOptions(int sendQueueDepth, int receiveQueueDepth, int maxInlineData, byte[] privateData) {
    this(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, null);
  }

  /**
   * Gives {@code shared}, a channel the endpoint acquired from {@link #channels()}, back to that
   * source; nothing when it is null (the endpoint made its own channel, or acquired none).
   */
  public void releaseChannel(@Nullable CompletionChannel shared) {
    CompletionChannelSource source = channels;
    if (shared != null && source != null) {
      source.release(shared);
    }
  }

  /** These options with the endpoint's CQ on a channel from {@code channels}. */
  public EndpointOptions withChannels(@Nullable CompletionChannelSource channels) {
    return new EndpointOptions(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels);
  }

  @Override
  public byte[] privateData() {
    return privateData.clone();
  }

  /** The depth the endpoint's single CQ needs: both work queues complete into it. */
  public int completionQueueDepth() {
    return sendQueueDepth + receiveQueueDepth;
  }
}
