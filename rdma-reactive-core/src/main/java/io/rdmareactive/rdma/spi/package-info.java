/** The provider SPI: what a verbs implementation (native FFM, in-memory) supplies. Found through {@link java.util.ServiceLoader}. */
@NullMarked
package io.rdmareactive.rdma.spi;

import org.jspecify.annotations.NullMarked;
