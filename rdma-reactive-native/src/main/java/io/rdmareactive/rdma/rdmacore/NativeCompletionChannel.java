package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.NonBlocking;

/**
 * A completion channel (ibv_create_comp_channel). Its fd is made non-blocking so that
 * {@link #nextEvent()} never blocks; {@link #awaitEvent} is poll(2) on the fd and on an eventfd
 * that {@link #wakeup()} signals. Every CQ on the channel holds a lease on it, so closing it while a
 * CQ uses it fails with EBUSY before the native call (which would fail the same way).
 *
 * <p>Waiters and wakers are counted users of the two fds: {@link #close()} marks the channel
 * closing (new users are refused), signals the eventfd so that a waiter returns at once, waits the
 * moment it takes the users to leave, and only then destroys the channel and closes the eventfd.
 * So no poll or write ever sees an fd number that was closed and perhaps reused, and the context
 * cannot be closed under a channel that is still being destroyed.
 */
final class NativeCompletionChannel extends AbstractRdmaResource implements CompletionChannel, NativeContextBound {
  /** Set in {@link #users} once close began; the low bits count the threads inside the fds. */
  private static final int CLOSING = 1 << 30;

  private final NativeContext context;
  final MemorySegment channel;
  private final int fd;
  private final int wakeFd;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment cqOut;
  private final MemorySegment cqContextOut;
  /**
   * struct pollfd[2] of the waiter. Concurrent waiters (not the event loop's way) share it
   * harmlessly: the fds are level-triggered, so a mixed-up revents costs at most one empty turn.
   */
  private final MemorySegment pollfds;
  private final MemorySegment drained;
  private final AtomicInteger users = new AtomicInteger();
  private boolean nativeDestroyed; // guarded by this

  /** Whether closing this closes its (borrowed) context too: a channel the transport's loops share. */
  private final boolean ownsContext;

  private NativeCompletionChannel(NativeContext context, MemorySegment channel, int wakeFd, boolean ownsContext) {
    // A shared channel holds no lease on its context: it closes the context itself, after it.
    super("CompletionChannel[" + context.deviceName() + "]", ownsContext ? null : context);
    this.context = context;
    this.ownsContext = ownsContext;
    this.channel = channel.reinterpret(SIZEOF_COMP_CHANNEL);
    this.fd = this.channel.get(JAVA_INT, COMP_CHANNEL_FD);
    this.wakeFd = wakeFd;
    this.cqOut = arena.allocate(ADDRESS);
    this.cqContextOut = arena.allocate(ADDRESS);
    this.pollfds = arena.allocate(16, 4);
    this.drained = arena.allocate(JAVA_LONG);
  }

  static NativeCompletionChannel create(NativeContext context) {
    return create(context, false);
  }

  /**
   * A channel on {@code borrowed} (a wrapper of librdmacm's context for a device) that the CQs of
   * every endpoint on that device may share; closing it closes the wrapper too.
   */
  static NativeCompletionChannel createShared(NativeContext borrowed) {
    try {
      return create(borrowed, true);
    } catch (RuntimeException | Error e) {
      borrowed.close();
      throw e;
    }
  }

  private static NativeCompletionChannel create(NativeContext context, boolean ownsContext) {
    context.ensureOpen();
    MemorySegment ch = Native.created("ibv_create_comp_channel", Ibverbs.createCompChannel(context.ctx));
    int wake = -1;
    try {
      Libc.setNonBlocking(ch.reinterpret(SIZEOF_COMP_CHANNEL).get(JAVA_INT, COMP_CHANNEL_FD));
      wake = Libc.newEventFd(Libc.EFD_NONBLOCK | Libc.EFD_CLOEXEC);
      return new NativeCompletionChannel(context, ch, wake, ownsContext);
    } catch (RuntimeException | Error e) {
      if (wake >= 0) {
        Libc.close(wake);
      }
      Ibverbs.destroyCompChannel(ch);
      throw e;
    }
  }

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public RdmaContext context() {
    return context;
  }

  int fd() {
    return fd;
  }

  @Override
  public boolean awaitEvent(Duration timeout) {
    ensureOpen();
    if (!enter()) {
      throw new ResourceClosedException(toString());
    }
    try {
      int ready = Libc.awaitEither(pollfds, fd, wakeFd, timeout.isNegative() ? 0 : timeout.toNanos());
      if ((ready & Libc.SECOND_READY) != 0 && (users.get() & CLOSING) == 0) {
        Libc.drain(wakeFd, drained); // a wakeup is consumed by the wait it ended
      }
      return (ready & Libc.FIRST_READY) != 0 && (users.get() & CLOSING) == 0;
    } finally {
      leave();
    }
  }

  /** Signals the eventfd: a waiter in {@link #awaitEvent} returns now, or the next one at once. */
  @Override
  public void wakeup() {
    if (enter()) {
      try {
        Libc.signal(wakeFd); // cannot fail but for EAGAIN at a counter of 2^64-2: then it is readable anyway
      } finally {
        leave();
      }
    }
  }

  @Override
  public synchronized @Nullable CompletionQueue nextEvent() {
    ensureOpen();
    int rc = Ibverbs.getCqEvent(channel, cqOut, cqContextOut);
    if (rc != 0) {
      int errno = Native.errnoOf(rc);
      if (errno == NativeCallException.EAGAIN || errno == NativeCallException.EINTR) {
        return null;
      }
      throw Native.failure("ibv_get_cq_event", errno);
    }
    long id = cqContextOut.get(JAVA_LONG, 0);
    NativeCompletionQueue cq = context.cqById(id);
    if (cq == null) {
      // Cannot happen while CQs ack before destroy; keep the native counts balanced regardless.
      Ibverbs.ackCqEvents(cqOut.get(ADDRESS, 0), 1);
      return null;
    }
    cq.eventReceived();
    return cq;
  }

  /** Counts the caller in as a user of the fds; false once the channel is closing. */
  private boolean enter() {
    for (;;) {
      int u = users.get();
      if ((u & CLOSING) != 0) {
        return false;
      }
      if (users.compareAndSet(u, u + 1)) {
        return true;
      }
    }
  }

  private void leave() {
    users.decrementAndGet();
  }

  @Override
  protected void release() {
    // Closing counts as a user too, so that the eventfd stays open for the signal below.
    int inside = users.getAndUpdate(u -> (u | CLOSING) + 1);
    if (inside != 0) {
      Libc.signal(wakeFd);
      awaitOthersLeft();
    }
    int errno = destroyNative();
    if (errno != 0) {
      users.set(0); // still open: it can be used and closed again
      throw Native.failure(closeFunction(), errno, toString());
    }
    if (ownsContext) {
      context.close();
    }
  }

  /**
   * Waits for the woken waiters (and any waker) to leave: a poll(2) that returns and a counter
   * decrement, microseconds unless the OS paused them. An event loop (a non-blocking thread, where
   * BlockHound reports parking) closing another loop's channel spins; others park between checks.
   */
  private void awaitOthersLeft() {
    boolean mayPark = !(Thread.currentThread() instanceof NonBlocking);
    for (int spins = 0; users.get() != (CLOSING | 1); spins++) {
      if (mayPark && spins >= 1_000) {
        LockSupport.parkNanos(20_000);
      }
    }
  }

  /** Destroys the channel and closes the eventfd; returns ibv_destroy_comp_channel's errno. */
  private int destroyNative() {
    if (!nativeDestroyed) {
      int rc = Ibverbs.destroyCompChannel(channel);
      if (rc != 0) {
        return Native.errnoOf(rc);
      }
      nativeDestroyed = true;
    }
    Libc.close(wakeFd);
    arena.close();
    return 0;
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_comp_channel";
  }
}
