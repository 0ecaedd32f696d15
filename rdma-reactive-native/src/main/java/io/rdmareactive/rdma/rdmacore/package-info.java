/**
 * The native provider: libibverbs and librdmacm through FFM. The only package with
 * {@code java.lang.foreign} handles, struct layouts and C names.
 */
@NullMarked
package io.rdmareactive.rdma.rdmacore;

import org.jspecify.annotations.NullMarked;
