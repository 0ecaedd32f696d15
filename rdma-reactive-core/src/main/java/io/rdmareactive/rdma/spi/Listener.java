package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.RdmaResource;
import java.net.InetSocketAddress;
import reactor.core.publisher.Flux;

/**
 * A listening RDMA CM id (rdma_listen). Connect requests become {@link Endpoint}s, not yet
 * accepted, as {@link #incoming()} has demand (rdma_get_request); requests nobody takes stay
 * pending and their initiators eventually time out. Closing stops listening, rejects pending
 * requests and completes {@link #incoming()}; endpoints already emitted are their taker's.
 */
public interface Listener extends RdmaResource {
  /** The address bound, with the actual port when port 0 was asked for. */
  InetSocketAddress boundAddress();

  /** Connect requests as endpoints in INIT; one subscriber. The subscriber must close every endpoint it gets. */
  Flux<Endpoint> incoming();
}
