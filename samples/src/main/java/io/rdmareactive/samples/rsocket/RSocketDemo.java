package io.rdmareactive.samples.rsocket;

import io.rdmareactive.spring.boot.RdmaRSocketRequesters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * Starts {@link RSocketDemoApplication} and calls it with a {@link GreetingClient}: one
 * request-response and a request-stream of {@code rsocket-demo.ticks} (default 100). The first
 * argument picks the transport, {@code tcp} (default) or {@code rdma}: all it changes is the
 * property {@code rdma.rsocket.server.enabled}. Further arguments are Spring properties, e.g.
 * {@code rdma --rdma.provider=in-memory --rsocket-demo.host=127.0.0.1}. Exits 0 when both calls
 * answered as expected.
 */
public final class RSocketDemo {
  private RSocketDemo() {}

  public static void main(String[] args) {
    boolean ok = false;
    try {
      ok = run(Duration.ofMinutes(3), args);
    } catch (RuntimeException e) {
      System.err.println("rsocket demo: FAILED: " + e);
    }
    System.out.println(ok ? "rsocket demo: OK" : "rsocket demo: FAILED");
    System.exit(ok ? 0 : 1);
  }

  /** Runs the demo; whether the greeting and every tick arrived. */
  public static boolean run(Duration timeout, String... args) {
    boolean[] ok = new boolean[1];
    withClient(args, (ctx, client) -> {
      int n = ctx.getEnvironment().getProperty("rsocket-demo.ticks", Integer.class, 100);
      String greeting = client.greet("RSocket").block(timeout);
      System.out.println("greet -> " + greeting);
      Long ticks = client.ticks(n).count().block(timeout);
      System.out.println("ticks(" + n + ") -> " + ticks + " ticks");
      ok[0] = "Hello, RSocket!".equals(greeting) && ticks != null && ticks == n;
    });
    return ok[0];
  }

  /** What the demo does with the running service. */
  public interface Body {
    void accept(ConfigurableApplicationContext context, GreetingClient client);
  }

  /** Starts the service as {@code args} say, hands a connected client to {@code body}, closes both. */
  public static void withClient(String[] args, Body body) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    boolean rdma = false;
    if (!all.isEmpty() && !all.getFirst().startsWith("--")) {
      String transport = all.removeFirst();
      if (!transport.equals("tcp") && !transport.equals("rdma")) {
        throw new IllegalArgumentException("transport must be tcp or rdma, was " + transport);
      }
      rdma = transport.equals("rdma");
    }
    all.add("--rdma.rsocket.server.enabled=" + rdma);
    boolean overRdma = rdma;
    withApplication(all, ctx -> {
      Environment env = ctx.getEnvironment();
      String host = env.getRequiredProperty("rsocket-demo.host");
      int port = env.getRequiredProperty("local.rsocket.server.port", Integer.class);
      System.out.println("rsocket demo: serving over " + (overRdma ? "RDMA" : "TCP") + " on " + host + ":" + port);
      try (GreetingClient client = GreetingClient.connect(overRdma, ctx.getBean(RdmaRSocketRequesters.class), host,
          port)) {
        body.accept(ctx, client);
      }
    });
  }

  private static void withApplication(List<String> args, Consumer<ConfigurableApplicationContext> body) {
    args.add("--spring.main.keep-alive=false"); // one JVM: nothing needs to outlive main
    try (ConfigurableApplicationContext ctx = RSocketDemoApplication.application().run(args.toArray(String[]::new))) {
      body.accept(ctx);
    }
  }
}
