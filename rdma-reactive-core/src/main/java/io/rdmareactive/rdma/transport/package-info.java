/** Duplex messaging connections: RdmaServer, RdmaClient, RdmaConnection. */
@NullMarked
package io.rdmareactive.rdma.transport;

import org.jspecify.annotations.NullMarked;
