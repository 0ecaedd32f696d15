package io.rdmareactive.rsocket.boot;

import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rsocket.CloseableRdmaServer;
import io.rdmareactive.rsocket.RdmaServerTransport;
import io.rsocket.SocketAcceptor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.rsocket.server.RSocketServer;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.boot.rsocket.server.RSocketServerException;
import org.springframework.boot.rsocket.server.RSocketServerFactory;

/**
 * A Spring Boot {@link RSocketServerFactory} whose servers listen over RDMA, through
 * {@link RdmaServerTransport}. Declared as a bean, it replaces Boot's Netty factory (Boot's is
 * {@code @ConditionalOnMissingBean}); Boot starts its server when {@code spring.rsocket.server.port}
 * is set (the port and address used are this factory's {@link RdmaServer}'s). Pass Boot's
 * {@link RSocketServerCustomizer}s on: one of them matches the payload decoder to Spring's
 * message handler.
 *
 * <pre>{@code
 * @Bean
 * RdmaRSocketServerFactory rsocketServerFactory(ObjectProvider<RSocketServerCustomizer> customizers) {
 *   RdmaRSocketServerFactory factory = new RdmaRSocketServerFactory(RdmaServer.create().host("10.0.0.1").port(7878));
 *   factory.setServerCustomizers(customizers.orderedStream().toList());
 *   return factory;
 * }
 * }</pre>
 *
 * Requesters need no hook: {@code RSocketRequester.builder().transport(RdmaClientTransport.create(host, port))}.
 * With rdma-reactive-spring-boot-starter, {@code rdma.rsocket.server.enabled=true} declares this
 * factory from properties instead (and serves without {@code spring.rsocket.server.port}).
 */
public class RdmaRSocketServerFactory implements RSocketServerFactory {
  private final RdmaServerTransport transport;
  private final List<RSocketServerCustomizer> customizers = new ArrayList<>();
  private Duration lifecycleTimeout = Duration.ofSeconds(30);

  /** Servers listening as {@code server} says, options and all. */
  public RdmaRSocketServerFactory(RdmaServer server) {
    this(RdmaServerTransport.create(server));
  }

  /** Servers on {@code transport}. */
  public RdmaRSocketServerFactory(RdmaServerTransport transport) {
    this.transport = Objects.requireNonNull(transport, "transport");
  }

  /** The transport each server this factory creates binds. */
  public RdmaServerTransport transport() {
    return transport;
  }

  /** Replaces the customizers applied to each {@code io.rsocket.core.RSocketServer}. */
  public void setServerCustomizers(Collection<? extends RSocketServerCustomizer> customizers) {
    this.customizers.clear();
    this.customizers.addAll(customizers);
  }

  /** Adds customizers, applied to the RSocketServer in the order given, after those set before. */
  public void addServerCustomizers(RSocketServerCustomizer... customizers) {
    this.customizers.addAll(Arrays.asList(customizers));
  }

  /** How long {@code start()} and {@code stop()} wait (default 30 s). */
  public Duration lifecycleTimeout() {
    return lifecycleTimeout;
  }

  /** Sets {@link #lifecycleTimeout()}. */
  public void setLifecycleTimeout(Duration timeout) {
    this.lifecycleTimeout = Objects.requireNonNull(timeout, "timeout");
  }

  @Override
  public RSocketServer create(SocketAcceptor socketAcceptor) {
    io.rsocket.core.RSocketServer server = io.rsocket.core.RSocketServer.create(socketAcceptor);
    for (RSocketServerCustomizer c : customizers) {
      c.customize(server);
    }
    return new Server(server, transport, lifecycleTimeout);
  }

  private static final class Server implements RSocketServer {
    private final io.rsocket.core.RSocketServer server;
    private final RdmaServerTransport transport;
    private final Duration timeout;
    private volatile @Nullable CloseableRdmaServer bound;

    Server(io.rsocket.core.RSocketServer server, RdmaServerTransport transport, Duration timeout) {
      this.server = server;
      this.transport = transport;
      this.timeout = timeout;
    }

    @Override
    public synchronized void start() throws RSocketServerException {
      if (bound != null) {
        return;
      }
      try {
        bound = server.bind(transport).block(timeout);
      } catch (RuntimeException e) {
        throw new RSocketServerException("Unable to start the RSocket server over RDMA", e);
      }
    }

    @Override
    public synchronized void stop() throws RSocketServerException {
      CloseableRdmaServer b = bound;
      if (b != null) {
        bound = null;
        b.dispose();
        try {
          b.onClose().block(timeout);
        } catch (RuntimeException e) {
          throw new RSocketServerException("Unable to stop the RSocket server over RDMA", e);
        }
      }
    }

    /** Null until started and after stopping: Boot's {@code RSocketServerBootstrap.isRunning()} relies on it. */
    @Override
    public @Nullable InetSocketAddress address() {
      CloseableRdmaServer b = bound;
      return b != null ? b.address() : null;
    }
  }
}
