package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.AbstractMemoryRegion;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

/**
 * A message sent straight from memory the application registered on the protection domain its
 * connection uses ({@link RdmaLoopResources#protectionDomain}): the SENDs gather from the region
 * itself, with no copy into a send buffer. Made by {@link OutboundMessage#of(MemoryRegion, long, int)}
 * (one range) or {@link OutboundMessage#gather} (up to {@link #MAX_RANGES} ranges of one region,
 * sent as one message in their order), it is sent once. A message of one range longer than
 * {@link RdmaOption#RENDEZVOUS_THRESHOLD} goes by rendezvous; a gathered one always by SENDs.
 *
 * <p>While the transport holds it, its region cannot be deregistered: from the moment the
 * connection takes the message to the completion of its last SEND (with selective signaling, the
 * completion of a later send that retires it), closing the region fails with
 * {@link io.rdmareactive.rdma.ResourceBusyException} (EBUSY), so the device never reads memory
 * that is no longer registered. {@link #released()} says when the transport is done with the
 * memory, sent or not: only then may the application write over those bytes or free them. The
 * arena behind the region must stay open until then too (the JDK, not the transport, owns it).
 */
public final class RegisteredMessage implements OutboundMessage {
  /**
   * Most ranges one message gathers from: the gather entries of a send work request
   * ({@link EndpointOptions#SEND_SCATTER_GATHER}), less one kept spare (a first fragment's declared
   * length took it before wire protocol v5).
   */
  public static final int MAX_RANGES = EndpointOptions.SEND_SCATTER_GATHER - 1;
  private static final int FRESH = 0;
  private static final int TAKEN = 1;
  private static final int LEASED = 2;
  private static final int RELEASED = 3;

  private final MemoryRegion region;
  private final long offset;
  private final int length;
  /** The ranges, when gathered from several (else null: the one range is offset, length). */
  private final long @Nullable [] offsets;
  private final int @Nullable [] lengths;
  /** Run once released, after the region's lease is given back. */
  private final @Nullable Runnable onRelease;
  private final AtomicInteger state = new AtomicInteger(FRESH);
  private final Sinks.Empty<Void> released = Sinks.empty();
  /** Data sends up to this sequence number carry the message (sender state, from the drain). */
  long lastSequence;

  RegisteredMessage(MemoryRegion region, long offset, int length) {
    if (offset < 0 || length < 0 || offset + length > region.length()) {
      throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + (long) length) + ") is outside the "
          + region.length() + "-byte memory region " + region);
    }
    this.region = region;
    this.offset = offset;
    this.length = length;
    this.offsets = null;
    this.lengths = null;
    this.onRelease = null;
  }

  RegisteredMessage(MemoryRegion region, long[] offsets, int[] lengths, @Nullable Runnable onRelease) {
    if (offsets.length != lengths.length || offsets.length < 1 || offsets.length > MAX_RANGES) {
      throw new IllegalArgumentException("a message gathers from 1 to " + MAX_RANGES + " ranges, given "
          + offsets.length + " offsets and " + lengths.length + " lengths");
    }
    long total = 0;
    for (int i = 0; i < offsets.length; i++) {
      if (offsets[i] < 0 || lengths[i] < 0 || offsets[i] + lengths[i] > region.length()) {
        throw new IndexOutOfBoundsException("range " + i + ", [" + offsets[i] + ", " + (offsets[i] + (long) lengths[i])
            + "), is outside the " + region.length() + "-byte memory region " + region);
      }
      total += lengths[i];
    }
    if (total > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a message is at most " + Integer.MAX_VALUE + " bytes, its ranges add up to " + total);
    }
    this.region = region;
    this.offset = offsets[0];
    this.length = (int) total;
    this.offsets = offsets.clone();
    this.lengths = lengths.clone();
    this.onRelease = onRelease;
  }

  /** The region the message is sent from. */
  public MemoryRegion region() {
    return region;
  }

  /** Where the message starts in the region (its first range, when gathered from several). */
  public long offset() {
    return offset;
  }

  /** How many ranges of the region the message gathers from: one, unless made by {@link OutboundMessage#gather}. */
  public int ranges() {
    return offsets == null ? 1 : offsets.length;
  }

  /** Where range {@code i} starts in the region. */
  long rangeOffset(int i) {
    return offsets == null ? offset : offsets[i];
  }

  /** Bytes of range {@code i}. */
  int rangeLength(int i) {
    return lengths == null ? length : lengths[i];
  }

  @Override
  public int length() {
    return length;
  }

  /**
   * Completes once the transport is done with the memory: after the last SEND of the message
   * completed, or when the message was dropped unsent (the send failed or was cancelled, the
   * connection closed). Whether it arrived is what the {@code send(...)}'s {@code Mono} says.
   */
  public Mono<Void> released() {
    return released.asMono();
  }

  /**
   * Copies out of the region, for a transport that cannot gather from it; this one never does,
   * and gathers from the region instead.
   */
  @Override
  public void copyTo(long from, MemorySegment target, long targetOffset, int n) {
    long skip = from;
    for (int i = 0, ranges = ranges(); i < ranges && n > 0; i++) {
      int len = rangeLength(i);
      if (skip >= len) {
        skip -= len;
        continue;
      }
      int take = (int) Math.min(len - skip, n);
      MemorySegment.copy(region.segment(), rangeOffset(i) + skip, target, targetOffset, take);
      targetOffset += take;
      n -= take;
      skip = 0;
    }
  }

  /**
   * The transport takes the message to send it on a connection over {@code pd}: it holds the
   * region from now until {@link #release()}. Fails for a message sent before, a region
   * deregistered or on another protection domain, or memory whose arena is closed; the message
   * is then released (dropped), holding nothing.
   */
  void take(ProtectionDomain pd) {
    if (!state.compareAndSet(FRESH, TAKEN)) {
      throw new IllegalStateException("this RegisteredMessage was already sent: make one per send "
          + "(OutboundMessage.of(region, offset, length))");
    }
    try {
      if (!(region instanceof AbstractMemoryRegion r)) {
        throw new IllegalArgumentException("cannot send from " + region
            + ": not a memory region of an rdma-reactive provider");
      }
      r.acquireLease(); // ResourceClosedException once deregistered
      state.set(LEASED);
      if (!r.isDependantOf(pd)) {
        throw new IllegalArgumentException("cannot send from " + region + ": it is registered on another "
            + "protection domain than the connection's " + pd + "; register it on "
            + "RdmaLoopResources.protectionDomain(provider, device) of the loops the connection runs on");
      }
      if (!r.segment().scope().isAlive()) {
        throw new IllegalStateException("cannot send from " + region + ": the arena of its memory is closed");
      }
    } catch (RuntimeException e) {
      release();
      throw e;
    }
  }

  /** The transport is done with the memory: the region may be deregistered again. Exactly once. */
  @Override
  public void release() {
    int s = state.getAndSet(RELEASED);
    if (s == RELEASED) {
      return;
    }
    if (s == LEASED) {
      ((AbstractMemoryRegion) region).releaseLease();
    }
    released.tryEmitEmpty();
    if (onRelease != null) {
      try {
        onRelease.run(); // after the lease: it may deregister the region
      } catch (RuntimeException e) { // the application's: it may run on the connection's drain, which must go on
        Operators.onErrorDropped(e, Context.empty());
      }
    }
  }

  @Override
  public String toString() {
    return "RegisteredMessage[" + length + " bytes at " + offset + (ranges() > 1 ? " in " + ranges() + " ranges" : "")
        + " of " + region + "]";
  }
}
