/**
 * The RSocket sample: a Spring Boot RSocket service ({@code @MessageMapping} request-response and
 * request-stream) and a client using {@code RSocketRequester}, over TCP or RDMA by a property.
 */
@NullMarked
package io.rdmareactive.samples.rsocket;

import org.jspecify.annotations.NullMarked;
