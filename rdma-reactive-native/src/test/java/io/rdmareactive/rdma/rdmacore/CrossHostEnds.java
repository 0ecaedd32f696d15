package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.conformance.CrossHost;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * This guest's end of one cross-host connection: in guest a a server on its address whose handler
 * is {@code handler}, in guest b a client of it running the same handler. Opening waits until both
 * ends are connected; closing heals this guest's end of the wire, then disposes (guest a's server
 * ends whatever connection is left).
 */
final class CrossHostEnds implements AutoCloseable {
  static final Duration WAIT = Duration.ofSeconds(60);

  private final CrossHost pair;
  private final @Nullable DisposableRdmaServer server;
  private final @Nullable RdmaConnection client;

  private CrossHostEnds(CrossHost pair, @Nullable DisposableRdmaServer server, @Nullable RdmaConnection client) {
    this.pair = pair;
    this.server = server;
    this.client = client;
  }

  /**
   * Before a class's first leak check: opens the device context the CM shares for the rest of the
   * JVM (the kernel counts it as ctx), by a listen on this guest's address closed at once. Outside
   * a pair guest nothing: the tests abort, saying why.
   */
  static void warmUp() {
    String self = System.getenv("RDMA_PAIR_SELF");
    if (self != null) {
      new NativeProvider().connections()
          .listen(new InetSocketAddress(self, 0), new EndpointOptions(1, 1, 0, new byte[0])).close();
    }
  }

  static CrossHostEnds open(CrossHost pair, int port, UnaryOperator<RdmaServer> serverOptions,
      UnaryOperator<RdmaClient> clientOptions, BiFunction<RdmaInbound, RdmaOutbound, Mono<Void>> handler) {
    if (pair.isA()) {
      DisposableRdmaServer s = serverOptions.apply(RdmaServer.create().host(pair.self()).port(port)
          .option(RdmaOption.PROVIDER, NativeProvider.NAME)).handle(handler).bindNow(WAIT);
      pair.barrier("listening");
      pair.barrier("connected");
      return new CrossHostEnds(pair, s, null);
    }
    pair.barrier("listening");
    RdmaConnection c = clientOptions.apply(RdmaClient.create().host(pair.peer()).port(port)
        .option(RdmaOption.PROVIDER, NativeProvider.NAME).connectTimeout(WAIT)).connectNow(WAIT);
    handler.apply(c.inbound(), c.outbound()).subscribe();
    pair.barrier("connected");
    return new CrossHostEnds(pair, null, c);
  }

  /** Both ends of the wire whole again before either closes, so that the close is not lost. */
  void heal() {
    pair.heal();
    pair.barrier("healed");
  }

  @Override
  public void close() {
    pair.heal();
    if (client != null) {
      client.dispose();
      client.onDispose().block(WAIT);
    }
    if (server != null) {
      server.disposeNow(WAIT);
    }
  }
}
