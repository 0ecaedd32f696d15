/** A pure-Java provider with verbs semantics, for tests and machines without RDMA. */
@NullMarked
package io.rdmareactive.rdma.inmemory;

import org.jspecify.annotations.NullMarked;
