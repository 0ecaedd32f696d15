package io.rdmareactive.samples;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.time.Duration;

/**
 * An echo server: every message a client sends comes back to it.
 *
 * <pre>
 *   EchoServer [host [port [provider [seconds]]]]
 *   defaults: 10.0.0.1 (the Soft-RoCE VM's rxe0) 7471, the RDMA_PROVIDER selection, until killed
 * </pre>
 *
 * With the in-memory provider connections stay inside one JVM, so a separate EchoClient process
 * cannot reach it; EchoClient starts its own in-process server in that case.
 */
public final class EchoServer {
  private EchoServer() {}

  public static void main(String[] args) {
    String host = SampleArgs.arg(args, 0, "10.0.0.1");
    int port = SampleArgs.port(SampleArgs.arg(args, 1, "7471"));
    String provider = SampleArgs.provider(SampleArgs.arg(args, 2, "default"));
    long seconds = Long.parseLong(SampleArgs.arg(args, 3, "0"));
    DisposableRdmaServer server = start(host, port, provider);
    System.out.println("echo server (" + provider + ") listening on " + server.address());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> server.disposeNow(Duration.ofSeconds(10)), "echo-stop"));
    if (seconds > 0) {
      server.onDispose().onErrorComplete().timeout(Duration.ofSeconds(seconds), reactor.core.publisher.Mono.empty())
          .block();
      server.disposeNow(Duration.ofSeconds(10));
      System.out.println("echo server stopped after " + seconds + " s");
    } else {
      server.onDispose().block();
    }
  }

  /** Binds an echo server. */
  static DisposableRdmaServer start(String host, int port, String provider) {
    return RdmaServer.create().host(host).port(port).option(RdmaOption.PROVIDER, provider)
        .handle((in, out) -> out.send(in.receive()))
        .bindNow();
  }
}
