/**
 * Spring Boot auto-configuration for rdma-reactive: an {@link io.rdmareactive.rdma.transport.RdmaServer}
 * around an {@link io.rdmareactive.spring.boot.RdmaHandler} bean, started and stopped with the
 * application context, named clients ({@link io.rdmareactive.spring.boot.RdmaClients}), a health
 * indicator and Micrometer metrics. Configured under {@code rdma.*}.
 */
@NullMarked
package io.rdmareactive.spring.boot;

import org.jspecify.annotations.NullMarked;
