package io.rdmareactive.rdma.verbs;

/**
 * A verbs object that owns a native (or in-memory) handle. {@link #close()} is idempotent;
 * any other use after close throws {@link io.rdmareactive.rdma.ResourceClosedException}.
 * Closing an object that still has live children (a PD with MRs or QPs, a channel with CQs)
 * fails with {@link io.rdmareactive.rdma.ResourceBusyException} and leaves both open: children
 * are released first, which the {@code with...} lifecycle helpers do by construction.
 */
public interface RdmaResource extends AutoCloseable {

  /** Whether {@link #close()} has run. */
  boolean isClosed();

  /** Releases the native object. Idempotent. */
  @Override
  void close();
}
