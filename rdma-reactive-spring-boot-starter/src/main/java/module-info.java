/**
 * The Spring Boot starter: auto-configuration of an rdma-reactive server, named clients, the
 * RSocket server over RDMA, health and metrics, all from {@code rdma.*} properties. The
 * configuration package is open to Spring, which reads it reflectively; nothing else is exported
 * beyond the types applications inject.
 */
module io.rdmareactive.spring.boot {
  requires transitive io.rdmareactive.core;
  requires static io.rdmareactive.rdmacore;
  requires static io.rdmareactive.rsocket;
  requires static org.jspecify;
  requires static micrometer.core;
  requires static spring.boot.health;
  requires static spring.boot.rsocket;
  requires static spring.messaging;
  requires static rsocket.core;
  requires spring.beans;
  requires spring.boot;
  requires spring.boot.autoconfigure;
  requires spring.context;
  requires spring.core;
  requires org.apache.commons.logging;

  exports io.rdmareactive.spring.boot;
  opens io.rdmareactive.spring.boot to spring.core, spring.beans, spring.context;
}
