package io.rdmareactive.rdma.nativ;

import static io.rdmareactive.rdma.nativ.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A completion channel (ibv_create_comp_channel). Its fd is made non-blocking so that
 * {@link #nextEvent()} never blocks; {@link #awaitEvent} is poll(2) on the fd. Every CQ on the
 * channel holds a lease on it, so closing it while a CQ uses it fails with EBUSY before the native
 * call (which would fail the same way).
 */
final class NativeCompletionChannel extends AbstractRdmaResource implements CompletionChannel, NativeContextBound {
  private final NativeContext context;
  final MemorySegment channel;
  private final int fd;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment cqOut;
  private final MemorySegment cqContextOut;
  private boolean nativeDestroyed;

  private NativeCompletionChannel(NativeContext context, MemorySegment channel) {
    super("CompletionChannel[" + context.deviceName() + "]", context);
    this.context = context;
    this.channel = channel.reinterpret(SIZEOF_COMP_CHANNEL);
    this.fd = this.channel.get(JAVA_INT, COMP_CHANNEL_FD);
    this.cqOut = arena.allocate(ADDRESS);
    this.cqContextOut = arena.allocate(ADDRESS);
  }

  static NativeCompletionChannel create(NativeContext context) {
    context.ensureOpen();
    MemorySegment ch = Calls.create("ibv_create_comp_channel", context.verbs.createCompChannel, context.ctx);
    try {
      Posix.setNonBlocking(ch.reinterpret(SIZEOF_COMP_CHANNEL).get(JAVA_INT, COMP_CHANNEL_FD));
      return new NativeCompletionChannel(context, ch);
    } catch (RuntimeException | Error e) {
      Calls.status(context.verbs.destroyCompChannel, ch);
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
    return Posix.awaitReadable(fd, timeout.isNegative() ? 0 : timeout.toNanos());
  }

  @Override
  public synchronized @Nullable CompletionQueue nextEvent() {
    ensureOpen();
    int rc = Calls.status(context.verbs.getCqEvent, channel, cqOut, cqContextOut);
    if (rc != 0) {
      int errno = Calls.errnoOf(rc);
      if (errno == NativeCallException.EAGAIN || errno == NativeCallException.EINTR) {
        return null;
      }
      throw Native.failure("ibv_get_cq_event", errno);
    }
    long id = cqContextOut.get(JAVA_LONG, 0);
    NativeCompletionQueue cq = context.cqById(id);
    if (cq == null) {
      // Cannot happen while CQs ack before destroy; keep the native counts balanced regardless.
      Calls.plain(context.verbs.ackCqEvents, cqOut.get(ADDRESS, 0), 1);
      return null;
    }
    cq.eventReceived();
    return cq;
  }

  /**
   * Calls ibv_destroy_comp_channel directly, skipping the lease check, and returns its errno (0 on
   * success). Exists to show that the native call itself refuses (EBUSY) while a CQ uses the channel.
   */
  synchronized int destroyBypassingLeases() {
    ensureOpen();
    int rc = Calls.status(context.verbs.destroyCompChannel, channel);
    if (rc == 0) {
      nativeDestroyed = true;
    }
    return Calls.errnoOf(rc);
  }

  @Override
  protected void release() {
    if (!nativeDestroyed) {
      Calls.check(closeFunction(), Calls.status(context.verbs.destroyCompChannel, channel));
    }
    arena.close();
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_comp_channel";
  }
}
