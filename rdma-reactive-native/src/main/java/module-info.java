/**
 * The native provider: rdma-core's libibverbs and librdmacm through FFM. It exports its public
 * types only (the provider, the blocking endpoint API and the missing-library error); bindings,
 * struct flyweights, verbs objects and the CM loop are package-private. FFM downcalls are
 * restricted methods: run with {@code --enable-native-access=io.rdmareactive.nativ} (or
 * {@code ALL-UNNAMED} on the class path).
 */
module io.rdmareactive.nativ {
  requires transitive io.rdmareactive.core;
  requires static org.jspecify;

  exports io.rdmareactive.rdma.nativ;

  provides io.rdmareactive.rdma.spi.RdmaProvider with io.rdmareactive.rdma.nativ.NativeProvider;
}
