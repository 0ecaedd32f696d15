/** Implementation details: event loops, idle strategies, resource bookkeeping. Not for users to import. */
@NullMarked
package io.rdmareactive.rdma.loop;

import org.jspecify.annotations.NullMarked;
