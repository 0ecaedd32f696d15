package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.verbs.RdmaResource;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import reactor.util.Loggers;

/**
 * The base of every provider's verbs objects: idempotent close, use-after-close checks, and a
 * count of dependants (children such as a PD's MRs, or leases such as a running completion
 * stream) that makes closing a still-used object fail with {@link ResourceBusyException} before
 * any native call, so Java never frees memory that something else still uses. A subclass frees
 * its object in {@link #release()}, after its children are gone.
 */
public abstract class AbstractRdmaResource implements RdmaResource {
  private final String description;
  private final @Nullable AbstractRdmaResource parent;
  private int dependants;
  private volatile boolean closed;
  private final AtomicReference<@Nullable Object> consumer = new AtomicReference<>();

  /** Registers with {@code parent} (if any), which must be open. */
  protected AbstractRdmaResource(String description, @Nullable AbstractRdmaResource parent) {
    this.description = description;
    this.parent = parent;
    if (parent != null) {
      parent.acquireLease();
    }
  }

  /** Undoes the constructor's registration when a subclass constructor fails after super(). */
  protected final void abandon() {
    if (!closed) {
      closed = true;
      if (parent != null) {
        parent.releaseLease();
      }
    }
  }

  /** Marks one more dependant; fails with {@link ResourceClosedException} when closed. */
  public final synchronized void acquireLease() {
    ensureOpen();
    dependants++;
  }

  /** Drops one dependant. */
  public final synchronized void releaseLease() {
    if (dependants > 0) {
      dependants--;
    }
  }

  /** How many children or leases keep this object from closing. */
  public final synchronized int dependants() {
    return dependants;
  }

  /**
   * Makes {@code c} this object's one consumer of events (a CQ's completion stream, the loop that
   * waits on a completion channel), so that the object itself, not a registry beside it, says who
   * serves it. False when another holds the place.
   */
  public final boolean claimConsumer(Object c) {
    return consumer.compareAndSet(null, c);
  }

  /** Gives up the place {@link #claimConsumer} took, if {@code c} still holds it. */
  public final void releaseConsumer(Object c) {
    consumer.compareAndSet(c, null);
  }

  /** The consumer that holds the place now, or null. */
  public final @Nullable Object consumer() {
    return consumer.get();
  }

  /** Whether {@code r} is the object this one was made on (a memory region's PD, say). */
  public final boolean isDependantOf(RdmaResource r) {
    return parent == r;
  }

  /** Throws {@link ResourceClosedException} once this object is closed. */
  public final void ensureOpen() {
    if (closed) {
      throw new ResourceClosedException(description);
    }
  }

  @Override
  public final boolean isClosed() {
    return closed;
  }

  @Override
  public final void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (dependants > 0) {
        throw new ResourceBusyException(closeFunction(), NativeCallException.EBUSY,
            NativeCallException.describe(NativeCallException.EBUSY),
            description + " still has " + dependants + " live dependant(s); close them first");
      }
      release(); // may throw: the object then stays open and can be closed again
      closed = true;
    }
    if (parent != null) {
      parent.releaseLease();
    }
  }

  /** Frees the native object. Runs at most once successfully. */
  protected abstract void release();

  /** The C function that releases this object, named in errors (e.g. {@code ibv_dealloc_pd}). */
  protected abstract String closeFunction();

  /** Closes {@code c} (if any) while unwinding a failed construction; a failure to close is dropped. */
  public static void closeQuietly(@Nullable AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort: the construction's own failure is what the caller reports
        Loggers.getLogger(AbstractRdmaResource.class).debug("rdma-reactive: closing " + c + " while unwinding failed", e);
      }
    }
  }

  @Override
  public String toString() {
    return description + (closed ? " (closed)" : "");
  }
}
