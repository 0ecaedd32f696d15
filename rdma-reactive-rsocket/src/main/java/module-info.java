/**
 * RSocket over rdma-reactive connections: the client and server transports, and Spring Boot's
 * RSocket server factory (optional: only with spring-boot-rsocket present).
 */
module io.rdmareactive.rsocket {
  requires transitive io.rdmareactive.core;
  requires transitive rsocket.core;
  requires transitive io.netty.buffer;
  requires static org.jspecify;
  requires static spring.boot.rsocket;

  exports io.rdmareactive.rsocket;
  exports io.rdmareactive.rsocket.boot;
}
