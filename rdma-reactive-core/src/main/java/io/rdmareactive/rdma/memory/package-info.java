/**
 * Registered memory as the transport lends it to the layers above it, exported to the RSocket
 * module only. Below the transport, it names none of the transport's types.
 */
@NullMarked
package io.rdmareactive.rdma.memory;

import org.jspecify.annotations.NullMarked;
