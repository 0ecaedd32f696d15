package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;

/**
 * What the auto-configured server does with each connection: a bean of this type starts the
 * server. The connection is disposed when the returned publisher terminates.
 *
 * <pre>{@code
 * @Bean RdmaHandler echo() { return (in, out) -> out.send(in.receive()); }
 * }</pre>
 */
@FunctionalInterface
public interface RdmaHandler extends BiFunction<RdmaInbound, RdmaOutbound, Publisher<Void>> {}
