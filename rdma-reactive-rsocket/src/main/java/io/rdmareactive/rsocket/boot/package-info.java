/**
 * Spring Boot hook: {@link RdmaRSocketServerFactory}, an {@code RSocketServerFactory} that serves
 * Spring's RSocket endpoints over RDMA. Needs {@code spring-boot-rsocket} on the classpath.
 */
@NullMarked
package io.rdmareactive.rsocket.boot;

import org.jspecify.annotations.NullMarked;
