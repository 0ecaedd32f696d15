/**
 * RSocket transports over rdma-reactive connections: {@link RdmaClientTransport} and
 * {@link RdmaServerTransport}, one RSocket frame per RDMA message.
 */
@NullMarked
package io.rdmareactive.rsocket;

import org.jspecify.annotations.NullMarked;
