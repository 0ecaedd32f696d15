package io.rdmareactive.samples;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Sends messages to an {@link EchoServer} and checks that each comes back. Exit code 0 when all
 * did.
 *
 * <pre>
 *   EchoClient [host [port [provider [count]]]]
 *   defaults: 10.0.0.1 7471, the RDMA_PROVIDER selection, 10 messages
 * </pre>
 *
 * On the in-memory provider (connections within one JVM) it first starts an echo server in this
 * process, so that {@code RDMA_PROVIDER=in-memory scripts/run-sample EchoClient} works on any host.
 */
public final class EchoClient {
  private EchoClient() {}

  public static void main(String[] args) {
    String host = SampleArgs.arg(args, 0, "10.0.0.1");
    int port = SampleArgs.port(SampleArgs.arg(args, 1, "7471"));
    String provider = SampleArgs.provider(SampleArgs.arg(args, 2, "default"));
    int count = Integer.parseInt(SampleArgs.arg(args, 3, "10"));
    DisposableRdmaServer local = null;
    if (provider.equals("in-memory")) {
      local = EchoServer.start(host, port, provider);
      System.out.println("in-memory provider: started an in-process echo server on " + local.address());
    }
    int exit;
    RdmaConnection c = RdmaClient.create().host(host).port(port).option(RdmaOption.PROVIDER, provider)
        .connectNow();
    try {
      System.out.println("connected to " + c.address() + " (" + provider + ")");
      List<String> sent = Flux.range(1, count).map(i -> "hello " + i).collectList().block();
      List<String> echoed = c.inbound().receiveString()
          .doOnNext(m -> System.out.println("echo: " + m))
          .take(count)
          .mergeWith(c.outbound().sendString(Flux.fromIterable(sent)).then(reactor.core.publisher.Mono.empty()))
          .collectList()
          .block(Duration.ofSeconds(30));
      exit = sent.equals(echoed) ? 0 : 1;
      System.out.println(exit == 0 ? "echo client: OK, " + count + " messages echoed"
          : "echo client: FAILED, sent " + sent + " got " + echoed);
    } finally {
      c.dispose();
      c.onDispose().block(Duration.ofSeconds(10));
      if (local != null) {
        local.disposeNow(Duration.ofSeconds(10));
      }
    }
    System.exit(exit);
  }
}
