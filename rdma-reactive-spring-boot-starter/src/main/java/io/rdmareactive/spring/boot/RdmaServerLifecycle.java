package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;

/**
 * Binds the auto-configured {@link RdmaServer} when the context starts and disposes it when the
 * context stops: the listener closes, every connection is closed gracefully (posted sends
 * complete) and stopping waits up to {@code rdma.server.shutdown-timeout} for everything to be
 * freed. Once bound, the actual port is published as the {@code local.rdma.server.port} property.
 */
public class RdmaServerLifecycle implements SmartLifecycle, ApplicationContextAware {
  /** Started before and stopped after default-phase lifecycles, as Boot's web servers are. */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;
  static final String PORT_PROPERTY = "local.rdma.server.port";

  private static final Log log = LogFactory.getLog(RdmaServerLifecycle.class);

  private final RdmaServer server;
  private final Duration shutdownTimeout;
  private @Nullable ApplicationContext context;
  private volatile @Nullable DisposableRdmaServer bound;

  /** Binds {@code server} when the context starts; on stop, disposes it, waiting up to {@code shutdownTimeout} for its connections to drain. */
  public RdmaServerLifecycle(RdmaServer server, Duration shutdownTimeout) {
    this.server = server;
    this.shutdownTimeout = shutdownTimeout;
  }

  @Override
  public void setApplicationContext(ApplicationContext context) {
    this.context = context;
  }

  @Override
  public void start() {
    if (bound != null) {
      return;
    }
    DisposableRdmaServer s = server.bindNow();
    bound = s;
    log.info("RDMA server listening on " + s.address());
    if (context instanceof ConfigurableApplicationContext c) {
      MutablePropertySources sources = c.getEnvironment().getPropertySources();
      sources.remove("rdma.server.ports");
      sources.addFirst(new MapPropertySource("rdma.server.ports", Map.of(PORT_PROPERTY, s.port())));
    }
  }

  @Override
  public void stop(Runnable callback) {
    DisposableRdmaServer s = bound;
    bound = null;
    if (s == null) {
      callback.run();
      return;
    }
    s.dispose();
    s.onDispose().timeout(shutdownTimeout).subscribe(null, e -> {
      log.warn("RDMA server on " + s.address() + " did not free every connection within " + shutdownTimeout, e);
      callback.run();
    }, () -> {
      log.info("RDMA server on " + s.address() + " stopped");
      callback.run();
    });
  }

  @Override
  public void stop() {
    DisposableRdmaServer s = bound;
    bound = null;
    if (s != null) {
      s.disposeNow(shutdownTimeout);
    }
  }

  @Override
  public boolean isRunning() {
    return bound != null;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** How long stopping waits for the server's connections to drain ({@code rdma.server.shutdown-timeout}). */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** The bound server, null unless running. */
  public @Nullable DisposableRdmaServer server() {
    return bound;
  }

  /** The address listened on, null unless running. */
  public @Nullable InetSocketAddress address() {
    DisposableRdmaServer s = bound;
    return s != null ? s.address() : null;
  }

  /** The port listened on (the actual one when 0 was configured); -1 unless running. */
  public int port() {
    DisposableRdmaServer s = bound;
    return s != null ? s.port() : -1;
  }
}
