/**
 * Spring Boot auto-configuration for rdma-reactive: an {@link io.rdmareactive.rdma.transport.RdmaServer}
 * around an {@link io.rdmareactive.spring.boot.RdmaHandler} bean, started and stopped with the
 * application context, named clients ({@link io.rdmareactive.spring.boot.RdmaClients}), a health
 * indicator and Micrometer metrics; with Spring RSocket present, {@code @MessageMapping} handlers
 * served over RDMA ({@code rdma.rsocket.server.enabled}) and requesters connected over RDMA
 * ({@link io.rdmareactive.spring.boot.RdmaRSocketRequesters}). Configured under {@code rdma.*}.
 */
@NullMarked
package io.rdmareactive.spring.boot;

import org.jspecify.annotations.NullMarked;
