/**
 * rdma-reactive's core: the public API (devices, verbs objects, the transport), the provider SPI,
 * the in-memory provider and the reactive engine. Only the API and SPI packages are exported; the
 * engine's packages are not, so "internal" is the compiler's word, not a comment's.
 */
module io.rdmareactive.core {
  requires transitive org.reactivestreams;
  requires transitive reactor.core;
  requires static org.jspecify;
  requires static reactor.blockhound;
  requires reactor.netty.core;

  exports io.rdmareactive.rdma;
  exports io.rdmareactive.rdma.inmemory;
  exports io.rdmareactive.rdma.spi;
  exports io.rdmareactive.rdma.transport;
  exports io.rdmareactive.rdma.verbs;

  uses io.rdmareactive.rdma.spi.RdmaProvider;

  provides io.rdmareactive.rdma.spi.RdmaProvider with io.rdmareactive.rdma.inmemory.InMemoryProvider;
  provides reactor.blockhound.integration.BlockHoundIntegration
      with io.rdmareactive.rdma.internal.RdmaBlockHoundIntegration;
}
