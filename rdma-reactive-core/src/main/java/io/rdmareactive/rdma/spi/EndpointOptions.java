package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
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
 * @param retryCount the QP's transport retries before a send fails with RETRY_EXC_ERR (0..7)
 * @param rnrRetry the QP's receiver-not-ready retries before a send fails with RNR_RETRY_EXC_ERR
 *     (0..7; 7 means "forever" in InfiniBand, which lets a peer that never posts receives hold a
 *     send, and so a close, for good). Providers that do not model retries ignore both.
 * @param domains where the endpoint gets its protection domain (shared with other endpoints on
 *     the device); null: the endpoint allocates and owns a PD of its own
 * @param receiveQueues where the endpoint's queue pair gets a shared receive queue (then
 *     {@code receiveQueueDepth} is unused); null: the QP has a receive queue of its own
 */
public record EndpointOptions(int sendQueueDepth, int receiveQueueDepth, int maxInlineData, byte[] privateData,
    @Nullable CompletionChannelSource channels, int retryCount, int rnrRetry, @Nullable ProtectionDomainSource domains,
    @Nullable SharedReceiveQueueSource receiveQueues) {
  /**
   * Gather entries per send work request of an endpoint's QP: a message sent from the user's
   * registered memory gathers from up to three ranges (an RSocket frame's header, metadata and
   * data). The fourth carried a first fragment's declared length before wire protocol v5, which
   * puts it in the header; it is kept, unused, so that QPs keep their shape. Devices offer more
   * (rxe 32, mlx5 30); each entry adds 16 bytes to a send queue entry.
   */
  public static final int SEND_SCATTER_GATHER = 4;

  /** Longest private data accepted: rdma_connect's limit on InfiniBand/RoCE. */
  public static final int MAX_PRIVATE_DATA = 56;
  /**
   * Transport retries by default: 6, not the protocol's most (7), because Soft-RoCE (rxe) takes 7
   * as "retry forever", which would never find a dead peer there.
   */
  public static final int DEFAULT_RETRY_COUNT = 6;
  /** RNR retries by default: the most that is finite (7 would be infinite). */
  public static final int DEFAULT_RNR_RETRY = 6;

  /** Checks the depths, the inline size, the private data and the retry counts. */
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
    if (retryCount < 0 || retryCount > 7 || rnrRetry < 0 || rnrRetry > 7) {
      throw new IllegalArgumentException("retry counts are 3-bit (0 .. 7), were " + retryCount + "/" + rnrRetry);
    }
    privateData = privateData.clone();
  }

  /** Options whose endpoint allocates a PD and has a receive queue of its own. */
  public EndpointOptions(int sendQueueDepth, int receiveQueueDepth, int maxInlineData, byte[] privateData,
      @Nullable CompletionChannelSource channels, int retryCount, int rnrRetry) {
    this(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, retryCount, rnrRetry, null, null);
  }

  /** Options with the default (finite) retry counts. */
  public EndpointOptions(int sendQueueDepth, int receiveQueueDepth, int maxInlineData, byte[] privateData,
      @Nullable CompletionChannelSource channels) {
    this(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, DEFAULT_RETRY_COUNT,
        DEFAULT_RNR_RETRY);
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
    return new EndpointOptions(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, retryCount,
        rnrRetry, domains, receiveQueues);
  }

  /** These options with the endpoint's PD from {@code domains} (null: a PD of its own). */
  public EndpointOptions withDomains(@Nullable ProtectionDomainSource domains) {
    return new EndpointOptions(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, retryCount,
        rnrRetry, domains, receiveQueues);
  }

  /** These options with the endpoint's QP on a shared receive queue from {@code receiveQueues} (null: its own). */
  public EndpointOptions withReceiveQueues(@Nullable SharedReceiveQueueSource receiveQueues) {
    return new EndpointOptions(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, retryCount,
        rnrRetry, domains, receiveQueues);
  }

  /**
   * Gives {@code shared}, an SRQ the endpoint acquired from {@link #receiveQueues()}, back to that
   * source; nothing when it is null.
   */
  public void releaseReceiveQueue(@Nullable SharedReceiveQueue shared) {
    SharedReceiveQueueSource source = receiveQueues;
    if (shared != null && source != null) {
      source.release(shared);
    }
  }

  /**
   * Gives {@code shared}, a PD the endpoint acquired from {@link #domains()}, back to that source;
   * nothing when it is null.
   */
  public void releaseDomain(@Nullable ProtectionDomain shared) {
    ProtectionDomainSource source = domains;
    if (shared != null && source != null) {
      source.release(shared);
    }
  }

  /** These options with the given transport and RNR retry counts (0 .. 7 each). */
  public EndpointOptions withRetries(int retryCount, int rnrRetry) {
    return new EndpointOptions(sendQueueDepth, receiveQueueDepth, maxInlineData, privateData, channels, retryCount,
        rnrRetry, domains, receiveQueues);
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
