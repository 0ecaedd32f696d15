package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * What every provider's {@link Endpoint} shares: its verbs objects, made by {@link #createParts}
 * in one order and freed by {@link #release()} in the reverse one; the check that nothing else
 * uses them before anything is freed; the handshake's private data; and {@link #onDisconnect()}.
 * A provider supplies the queue pair's creation, {@link #establish()}, {@link #disconnect()} and
 * the connection id ({@link #releaseConnection()}).
 */
public abstract class AbstractEndpoint extends AbstractRdmaResource implements Endpoint {
  /** Whether this side initiated (rdma_connect) rather than answered a request (rdma_accept). */
  protected final boolean activeSide;
  /** The peer's address (active side), or the listener's (passive side). */
  protected final InetSocketAddress address;
  /** What the endpoint was created with. */
  protected final EndpointOptions options;
  /** Completes when the connection is gone; see {@link Endpoint#onDisconnect()}. */
  protected final Sinks.Empty<Void> onDisconnect = Sinks.empty();
  private final Parts parts;
  /** The CQ's leases that its own QP holds (one per work queue it completes). */
  private final int ownCqLeases;
  /** The options' source's channel that the CQ is on, given back after the CQ is closed. */
  private volatile @Nullable CompletionChannel sharedChannel;
  /** The options' source's SRQ, given back after the QP is closed; null when the QP has none. */
  private volatile @Nullable SharedReceiveQueue sharedReceiveQueue;
  /** The options' source's PD, given back after the QP is closed; null when the endpoint owns its PD. */
  private volatile @Nullable ProtectionDomain sharedPd;
  private volatile byte[] remotePrivateData;
  private volatile byte[] rejectData = new byte[0];

  /** Takes over {@code parts}; the caller closes them ({@link Parts#discard}) if this throws. */
  protected AbstractEndpoint(String description, boolean activeSide, InetSocketAddress address,
      EndpointOptions options, byte[] remotePrivateData, Parts parts) {
    super(description, null);
    this.activeSide = activeSide;
    this.address = address;
    this.options = options;
    this.remotePrivateData = remotePrivateData;
    this.parts = parts;
    this.sharedChannel = parts.sharedChannel();
    this.sharedPd = parts.sharedPd() ? parts.pd() : null;
    this.sharedReceiveQueue = parts.srq();
    this.ownCqLeases = dependantsOf(parts.cq());
  }

  /** Creates a connection's queue pair, on the endpoint's PD with its CQ for both work queues, in INIT. */
  @FunctionalInterface
  protected interface QueuePairFactory {
    /**
     * Creates the queue pair on {@code pd}, with {@code cq} for both work queues, taking its
     * receives from {@code srq} when it is not null (then it has no receive queue of its own).
     */
    QueuePair create(ProtectionDomain pd, CompletionQueue cq, @Nullable SharedReceiveQueue srq);
  }

  /**
   * An endpoint's verbs objects.
   *
   * @param channel the endpoint's own channel; null when the CQ is on {@code sharedChannel}
   * @param sharedChannel the channel from the options' source; null when the endpoint has its own
   * @param sharedPd whether {@code pd} came from the options' {@link EndpointOptions#domains() source}
   *     (then it and the CQ are on the PD's context, and the PD goes back to the source)
   * @param srq the shared receive queue from the options' source that the QP takes receives from; null: none
   */
  protected record Parts(RdmaContext context, ProtectionDomain pd, @Nullable CompletionChannel channel,
      @Nullable CompletionChannel sharedChannel, CompletionQueue cq, QueuePair qp, boolean sharedPd,
      @Nullable SharedReceiveQueue srq) {
    /** Frees these objects when the endpoint that was to own them could not be made. */
    public void discard(EndpointOptions options) {
      unwind(context, pd, sharedPd, channel, sharedChannel, cq, srq, qp, options);
    }
  }

  /**
   * Makes an endpoint's objects on {@code context}, which it takes over (a failure closes it too):
   * a PD (the options' shared one for {@code deviceName} when they name a source that has one,
   * with the CQ on that PD's context, the device's), a completion channel of its own or one from the options' source for {@code deviceName},
   * one CQ for both work queues, the options' shared receive queue for that channel when they
   * name a source that has one, and the QP that {@code queuePairs} makes on them.
   */
  protected static Parts createParts(RdmaContext context, String deviceName, EndpointOptions options,
      QueuePairFactory queuePairs) {
    ProtectionDomain pd = null;
    boolean sharedPd = false;
    CompletionChannel channel = null;
    CompletionChannel shared = null;
    CompletionQueue cq = null;
    SharedReceiveQueue srq = null;
    try {
      ProtectionDomainSource domains = options.domains();
      pd = domains == null ? null : domains.acquire(deviceName);
      sharedPd = pd != null;
      if (pd == null) {
        pd = context.allocateProtectionDomain();
      }
      // A QP's CQ must be on its PD's context: a shared PD's is the device's (librdmacm's one
      // context per device, which the CM ids use too), not the endpoint's; so is its own channel.
      RdmaContext cqContext = sharedPd ? pd.context() : context;
      CompletionChannelSource source = options.channels();
      if (source == null) {
        channel = cqContext.createCompletionChannel();
      } else {
        shared = source.acquire(deviceName);
      }
      CompletionChannel cqChannel = channel != null ? channel : shared;
      cq = cqContext.createCompletionQueue(options.completionQueueDepth(), cqChannel);
      SharedReceiveQueueSource receiveQueues = options.receiveQueues();
      if (receiveQueues != null && cqChannel != null) {
        srq = receiveQueues.acquire(cqChannel, pd);
      }
      return new Parts(context, pd, channel, shared, cq, queuePairs.create(pd, cq, srq), sharedPd, srq);
    } catch (RuntimeException | Error e) {
      unwind(context, pd, sharedPd, channel, shared, cq, srq, null, options);
      throw e;
    }
  }

  private static void unwind(RdmaContext context, @Nullable ProtectionDomain pd, boolean sharedPd,
      @Nullable CompletionChannel channel, @Nullable CompletionChannel shared, @Nullable CompletionQueue cq,
      @Nullable SharedReceiveQueue srq, @Nullable QueuePair qp, EndpointOptions options) {
    closeQuietly(qp);
    options.releaseReceiveQueue(srq);
    closeQuietly(cq);
    closeQuietly(channel);
    options.releaseChannel(shared);
    if (sharedPd) {
      options.releaseDomain(pd);
    } else {
      closeQuietly(pd);
    }
    closeQuietly(context);
  }

  @Override
  public final RdmaContext context() {
    return parts.context();
  }

  @Override
  public final ProtectionDomain protectionDomain() {
    return parts.pd();
  }

  @Override
  public final QueuePair queuePair() {
    return parts.qp();
  }

  @Override
  public final CompletionQueue completionQueue() {
    return parts.cq();
  }

  @Override
  public final @Nullable SharedReceiveQueue sharedReceiveQueue() {
    return parts.srq();
  }

  @Override
  public final byte[] remotePrivateData() {
    return remotePrivateData.clone();
  }

  /** Records the peer's private data (an accept's or a reject's), as {@link #remotePrivateData()} returns it. */
  protected final void remotePrivateData(byte[] data) {
    remotePrivateData = data;
  }

  /** What a reject sends the initiator: empty, unless {@link #reject} gave some. */
  protected final byte[] rejectData() {
    return rejectData;
  }

  @Override
  public final void reject(byte[] privateData) {
    rejectData = privateData.clone();
    close();
  }

  @Override
  public final Mono<Void> onDisconnect() {
    return onDisconnect.asMono();
  }

  /**
   * Fails with EBUSY before anything is freed while something besides the endpoint's own objects
   * uses them; then disconnects and frees children first. A failure part-way (say, a CQ whose
   * stream is still running) leaves this open, and a later close resumes where this one stopped.
   */
  @Override
  protected final void release() {
    checkNothingElseUses();
    disconnect();
    abortEstablish();
    parts.qp().close();
    SharedReceiveQueue srq = sharedReceiveQueue;
    sharedReceiveQueue = null; // given back once, as the channel
    options.releaseReceiveQueue(srq);
    parts.cq().close();
    if (parts.channel() != null) {
      parts.channel().close();
    }
    CompletionChannel shared = sharedChannel;
    sharedChannel = null; // given back once, even when a later step fails and close is retried
    options.releaseChannel(shared);
    if (parts.sharedPd()) {
      ProtectionDomain pd = sharedPd;
      sharedPd = null; // given back once, as the channel
      options.releaseDomain(pd);
    } else {
      parts.pd().close();
    }
    releaseConnection();
    parts.context().close();
  }

  /** Fails an {@link #establish()} still pending, as this endpoint closes; nothing by default. */
  protected void abortEstablish() {}

  /** Frees what the provider holds for the connection (the CM id), after the PD and before the context. */
  protected abstract void releaseConnection();

  @Override
  protected final String closeFunction() {
    return "rdma_destroy_ep";
  }

  private void checkNothingElseUses() {
    boolean qpOpen = !parts.qp().isClosed();
    int ownPd = qpOpen ? 1 : 0;
    int ownCq = qpOpen ? ownCqLeases : 0;
    // A shared PD's other users are other connections' and the loop's: none of this endpoint's business.
    int pdUsers = parts.sharedPd() ? 0 : dependantsOf(parts.pd());
    String busy = pdUsers > ownPd ? pdUsers - ownPd + " memory region(s) or other object(s) on its PD"
        : dependantsOf(parts.cq()) > ownCq ? "a completion stream (or another lease) on its CQ"
        : dependantsOf(parts.context()) > openChildren() ? "objects created on its context" : null;
    if (busy != null) {
      throw new ResourceBusyException(closeFunction(), NativeCallException.EBUSY,
          NativeCallException.describe(NativeCallException.EBUSY), this + " is still used: " + busy
              + "; close them first");
    }
  }

  private int openChildren() {
    if (parts.sharedPd()) {
      return 0; // a shared PD, and the CQ and channel with it, are on the device's context
    }
    CompletionChannel channel = parts.channel();
    return (parts.pd().isClosed() ? 0 : 1) + (channel == null || channel.isClosed() ? 0 : 1)
        + (parts.cq().isClosed() ? 0 : 1);
  }

  private static int dependantsOf(Object resource) {
    return resource instanceof AbstractRdmaResource r ? r.dependants() : 0;
  }
}
