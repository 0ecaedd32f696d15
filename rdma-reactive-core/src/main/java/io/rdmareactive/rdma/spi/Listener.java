package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.RdmaResource;
import java.net.InetSocketAddress;
import reactor.core.publisher.Flux;

/**
 * A listening RDMA CM id (rdma_listen). Connect requests are handed out as {@link ConnectRequest}s,
 * with nothing built for them yet, as {@link #incoming()} has demand; requests nobody takes wait
 * within the listen's {@link ListenLimits} and are then rejected. Closing stops listening, rejects
 * waiting requests and completes {@link #incoming()}; requests already emitted are their taker's.
 */
public interface Listener extends RdmaResource {
  /** The address bound, with the actual port when port 0 was asked for. */
  InetSocketAddress boundAddress();

  /**
   * Connect requests; one subscriber, which must build or reject every request it gets (and
   * close every endpoint it builds).
   */
  Flux<ConnectRequest> incoming();
}
