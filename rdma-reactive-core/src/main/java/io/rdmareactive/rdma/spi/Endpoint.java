package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.RdmaResource;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * One side of a reliable-connected RDMA connection, as librdmacm's rdma_create_ep (active side)
 * or rdma_get_request (passive side) leaves it: an RC queue pair already in INIT, so receives can
 * be posted, but not yet connected. {@link #establish} then runs rdma_connect or rdma_accept.
 *
 * <p>Both work queues complete into one {@link #completionQueue()} of a depth of at least
 * {@link EndpointOptions#completionQueueDepth()}, on a completion channel of its own or, when the
 * options name {@link EndpointOptions#channels() a source}, on the source's (shared, not the
 * endpoint's to close). Closing frees the QP, the CQ, its own channel and whatever else the endpoint created (the PD when it owns one;
 * the context when it opened one); memory regions registered on {@link #protectionDomain()} must be
 * closed first. Closing an established endpoint disconnects it first.
 */
public interface Endpoint extends RdmaResource {
  /** The device context the endpoint is on. */
  RdmaContext context();

  /** The protection domain its queue pair and memory belong to. */
  ProtectionDomain protectionDomain();

  /** Its reliable-connected queue pair. */
  QueuePair queuePair();

  /** The completion queue of both its work queues. */
  CompletionQueue completionQueue();

  /**
   * The shared receive queue its queue pair takes receives from (one from the options'
   * {@link EndpointOptions#receiveQueues() source}: post receives there, not on the QP); null when
   * the QP has a receive queue of its own.
   */
  default @Nullable SharedReceiveQueue sharedReceiveQueue() {
    return null;
  }

  /**
   * The peer's handshake private data: on the passive side its connect request's, from the start;
   * on the active side its accept reply's, once {@link #establish} completed, or its reject's,
   * once establish failed with REFUSED (empty before). May be padded with zeros by the fabric.
   */
  byte[] remotePrivateData();

  /**
   * Passive side, before {@link #establish}: refuses the connect request (rdma_reject) with
   * {@code privateData}, which the initiator sees as its {@link #remotePrivateData()}, then
   * closes this endpoint. Elsewhere it only closes.
   */
  void reject(byte[] privateData);

  /**
   * Connects (active side: rdma_connect) or accepts (passive side: rdma_accept), sending the options'
   * private data, and completes when the connection is ESTABLISHED. Errors are
   * {@link io.rdmareactive.rdma.ConnectionException}s: REFUSED (rejected, or nobody listens),
   * UNREACHABLE, TIMED_OUT, RESET. Cancelling abandons the attempt; the caller then closes the
   * endpoint. Called at most once. A failing attempt may move the QP to ERROR before this errors
   * (librdmacm does so on REJECTED and CONNECT_ERROR), so receives posted before it can complete
   * with WR_FLUSH_ERR first: leave the verdict to this Mono rather than {@link #disconnect()} on them.
   */
  Mono<Void> establish();

  /**
   * Completes when the connection is gone: the peer disconnected (RDMA_CM_EVENT_DISCONNECTED), or
   * {@link #disconnect()} or {@link #close()} ran here; errors instead when a fault ended it (the
   * device was removed, say), with an exception that names it. When the peer disconnected,
   * this side's QP stays as it is until the owner calls {@link #disconnect()} (or closes): the owner
   * moves it to ERROR from its own thread, after its last post, so that every posted work request
   * gets its flush completion.
   */
  Mono<Void> onDisconnect();

  /**
   * rdma_disconnect: moves the QP to ERROR (outstanding work requests complete with WR_FLUSH_ERR)
   * and tells the peer. Idempotent, never blocks, never throws for an endpoint that is not (or no
   * longer) connected.
   */
  void disconnect();

  /**
   * The fault behind a failed work request, when the provider knows one (its port went down, say):
   * the connection then fails with it, naming the fault, rather than with the bare completion
   * error. A link that goes down fails the work in flight at once, often before its async event
   * is read. Called on the connection's loop: must not block. Null (the default): none known.
   *
   * @param failure the completion's error, or null for a flush
   */
  default @Nullable ConnectionException faultBehind(@Nullable Throwable failure) {
    return null;
  }
}
