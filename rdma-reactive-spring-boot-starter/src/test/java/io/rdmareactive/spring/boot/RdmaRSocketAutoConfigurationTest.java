package io.rdmareactive.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rsocket.RdmaServerTransport;
import io.rdmareactive.rsocket.boot.RdmaRSocketServerFactory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.rsocket.context.RSocketPortInfoApplicationContextInitializer;
import org.springframework.boot.rsocket.netty.NettyRSocketServerFactory;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.messaging.rsocket.RSocketRequester;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** Spring's @MessageMapping handlers and RSocketRequester over RDMA (in-memory provider), or TCP by default. */
class RdmaRSocketAutoConfigurationTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withInitializer(new RSocketPortInfoApplicationContextInitializer())
      .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RSocketStrategiesAutoConfiguration.class,
          RSocketMessagingAutoConfiguration.class, RSocketRequesterAutoConfiguration.class,
          RSocketServerAutoConfiguration.class, RdmaRSocketAutoConfiguration.class))
      .withUserConfiguration(Routes.class)
      .withPropertyValues("rdma.provider=in-memory", "rdma.loops=1");

  private final ApplicationContextRunner rdma = runner.withPropertyValues("rdma.rsocket.server.enabled=true",
      "rdma.rsocket.server.host=127.0.0.1", "rdma.rsocket.server.port=0");

  @Controller
  static class Routes {
    @MessageMapping("greet")
    Mono<String> greet(String name) {
      return Mono.just("hello " + name);
    }

    @MessageMapping("count")
    Flux<String> count(String prefix) {
      return Flux.range(0, 1_000).map(i -> prefix + i);
    }
  }

  @Test
  void servesMessageMappingOverRdmaToARequesterOverRdmaAndFreesEverythingOnClose() {
    Map<String, Integer> before = new InMemoryProvider().liveObjects();
    rdma.run(ctx -> {
      assertThat(ctx).hasNotFailed().getBean(RSocketServerFactory.class).isInstanceOf(RdmaRSocketServerFactory.class);
      int port = port(ctx);
      RdmaRSocketRequesters requesters = ctx.getBean(RdmaRSocketRequesters.class);
      RSocketRequester requester = requesters.requester("127.0.0.1", port);
      try {
        exchange(requester, "rdma");
        assertThat(requesters.openConnections()).isEqualTo(1);
      } finally {
        requester.dispose();
      }
      await(() -> requesters.openConnections() == 0, "the requester's connection closes");
    });
    await(() -> new InMemoryProvider().liveObjects().equals(before), "every in-memory object is freed");
    assertThat(new InMemoryProvider().liveObjects()).isEqualTo(before);
  }

  @Test
  void aRequesterOfANamedClientUsesItsProperties() {
    rdma.withPropertyValues("rdma.rsocket.server.port=47123", "rdma.clients.greeter.host=127.0.0.1",
        "rdma.clients.greeter.port=47123", "rdma.clients.greeter.buffer-size=1024").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          assertThat(port(ctx)).isEqualTo(47123);
          RdmaRSocketRequesters requesters = ctx.getBean(RdmaRSocketRequesters.class);
          RSocketRequester requester = requesters.requester("greeter");
          try {
            // 4 KiB frames with 1 KiB buffers: the transport's fragments carry them.
            String big = "x".repeat(4096);
            StepVerifier.create(requester.route("greet").data(big).retrieveMono(String.class))
                .expectNext("hello " + big).expectComplete().verify(WAIT);
            assertThat(ctx.getBean(RdmaClients.class).openConnections()).isEqualTo(1);
          } finally {
            requester.dispose();
          }
        });
  }

  @Test
  void springRSocketServerPortServesWhenNoRdmaPortIsSet() {
    runner.withPropertyValues("rdma.rsocket.server.enabled=true", "rdma.rsocket.server.host=127.0.0.1",
        "spring.rsocket.server.port=47124").run(ctx -> {
          assertThat(ctx).hasNotFailed().getBean(RSocketServerFactory.class).isInstanceOf(RdmaRSocketServerFactory.class);
          assertThat(port(ctx)).isEqualTo(47124);
          RSocketRequester requester = ctx.getBean(RdmaRSocketRequesters.class).requester("127.0.0.1", 47124);
          try {
            exchange(requester, "boot-port");
          } finally {
            requester.dispose();
          }
        });
  }

  @Test
  void tcpStaysTheDefaultWithoutTheProperty() {
    runner.withPropertyValues("spring.rsocket.server.port=0").run(ctx -> {
      assertThat(ctx).hasNotFailed().hasSingleBean(RdmaRSocketRequesters.class);
      assertThat(ctx.getBean(RSocketServerFactory.class)).isInstanceOf(NettyRSocketServerFactory.class);
      assertThat(ctx).doesNotHaveBean(RdmaRSocketServerFactory.class);
      RSocketRequester requester = ctx.getBean(RSocketRequester.Builder.class).tcp("127.0.0.1", port(ctx));
      try {
        exchange(requester, "tcp");
      } finally {
        requester.dispose();
      }
    });
  }

  @Test
  void noServerAtAllWithoutEitherProperty() {
    runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RSocketServerFactory.class)
        .hasSingleBean(RdmaRSocketRequesters.class));
  }

  @Test
  void misconfigurationFailsTheStartNamingTheProperty() {
    runner.withPropertyValues("rdma.rsocket.server.enabled=true").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.server.port")
        .hasMessageContaining("spring.rsocket.server.port"));
    runner.withPropertyValues("rdma.rsocket.server.port=70000").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.server.port must be 0 .. 65535, was 70000"));
    runner.withPropertyValues("rdma.rsocket.client.buffer-count=0").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause()
        .hasMessageContaining("rdma.rsocket.client.buffer-count: BUFFER_COUNT must be 1 .. 16384, was 0"));
    rdma.withPropertyValues("rdma.rsocket.server.max-message-size=32").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.server.max-message-size must be >= 64"));
    runner.withPropertyValues("rdma.rsocket.client.raw=true").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.client.raw must be false"));
    runner.withPropertyValues("rdma.rsocket.client.max-pending-bytes=0B").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.client.max-pending-bytes must be positive, was 0B"));
  }

  @Test
  void enablingTheServerWithoutTheRSocketModuleFailsTheStartNamingTheArtifact() {
    // Before: the RSocket auto-configuration backed off silently and Boot's TCP server took the port.
    rdma.withClassLoader(new FilteredClassLoader(RdmaServerTransport.class)).run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.rsocket.server.enabled=true needs")
        .hasMessageContaining("io.rdmareactive:rdma-reactive-rsocket")
        .hasMessageNotContaining("spring-boot-starter-rsocket"));
    rdma.withClassLoader(new FilteredClassLoader(RSocketServerFactory.class)).run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("org.springframework.boot:spring-boot-starter-rsocket"));
    // Not enabled: nothing is required.
    runner.withClassLoader(new FilteredClassLoader(RdmaServerTransport.class))
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaRSocketServerFactory.class));
  }

  /** Request-response, then request-stream with REQUEST_N from the test: 3, then 997 more. */
  private static void exchange(RSocketRequester requester, String who) {
    StepVerifier.create(requester.route("greet").data(who).retrieveMono(String.class))
        .expectNext("hello " + who).expectComplete().verify(WAIT);
    StepVerifier.create(requester.route("count").data("n").retrieveFlux(String.class), 3)
        .expectNext("n0", "n1", "n2")
        .expectNoEvent(Duration.ofMillis(100))
        .thenRequest(997)
        .expectNextCount(996)
        .expectNext("n999")
        .expectComplete()
        .verify(WAIT);
  }

  private static int port(AssertableApplicationContext ctx) {
    Integer port = ctx.getEnvironment().getProperty("local.rsocket.server.port", Integer.class);
    assertThat(port).as("local.rsocket.server.port").isNotNull().isPositive();
    return port;
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() < deadline).as(what + " within " + WAIT).isTrue();
      LockSupport.parkNanos(5_000_000);
    }
  }
}
