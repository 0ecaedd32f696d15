/** Verbs objects in Java names, each owning one native (or in-memory) object, with Mono/Flux lifecycle helpers. */
@NullMarked
package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.NullMarked;
