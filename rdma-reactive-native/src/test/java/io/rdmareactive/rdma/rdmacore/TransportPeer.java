package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A transport peer in a JVM of its own, for {@link NativePeerKillTest} to kill: streams numbered
 * messages forever both ways, as a client ({@code client HOST PORT}) or a server
 * ({@code server HOST}, prints {@code LISTENING <port>}). Prints {@code CONNECTED} once connected.
 */
public final class TransportPeer {
  private TransportPeer() {}

  public static void main(String[] args) {
    String host = args[1];
    if (args[0].equals("client")) {
      RdmaConnection c = RdmaClient.create().host(host).port(Integer.parseInt(args[2]))
          // A fresh JVM under TCG connects interpreted (C2 only), and its first connect links every
          // downcall: it once took over 30 s on a loaded host. The same bound as the server's bind.
          .option(RdmaOption.PROVIDER, NativeProvider.NAME).connectTimeout(Duration.ofSeconds(120))
          .connectNow();
      System.out.println("CONNECTED");
      Mono.when(stream(c.inbound(), c.outbound())).block();
    } else {
      DisposableRdmaServer server = RdmaServer.create().host(host).port(0)
          .option(RdmaOption.PROVIDER, NativeProvider.NAME)
          .doOnConnection(c -> System.out.println("CONNECTED"))
          .handle(TransportPeer::stream)
          .bindNow(Duration.ofSeconds(120)); // a fresh JVM under TCG on a loaded host
      System.out.println("LISTENING " + server.port());
      server.onDispose().block();
    }
    System.out.println("ENDED"); // only if the test side closed first
  }

  /** Numbers out, forever; whatever comes in, released. */
  static Mono<Void> stream(RdmaInbound in, RdmaOutbound out) {
    return Mono.when(
        out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
          sink.next(ByteBuffer.allocate(8).putLong(i).array());
          return i + 1;
        })),
        in.receive().doOnNext(RdmaMessage::release).then());
  }

  /**
   * The command that runs this class in a new JVM like this one: the same java, and a class path
   * that has this JVM's plus where the classes it needs came from (a test launcher may load the
   * tests through a class loader of its own, not from java.class.path).
   */
  static List<String> command(String... args) {
    Set<String> path = new LinkedHashSet<>();
    for (Class<?> c : List.of(TransportPeer.class, NativeProvider.class, RdmaClient.class)) {
      path.add(location(c.getProtectionDomain().getCodeSource().getLocation()));
    }
    for (ClassLoader l = TransportPeer.class.getClassLoader(); l != null; l = l.getParent()) {
      if (l instanceof URLClassLoader u) {
        for (URL url : u.getURLs()) {
          path.add(location(url));
        }
      }
    }
    for (String p : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!p.isBlank()) {
        path.add(p);
      }
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElseThrow());
    cmd.add("--enable-native-access=ALL-UNNAMED");
    cmd.add("-cp");
    cmd.add(String.join(File.pathSeparator, path));
    cmd.add(TransportPeer.class.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static String location(URL url) {
    try {
      return Path.of(url.toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
