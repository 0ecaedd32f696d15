package io.rdmareactive.rsocket;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.transport.OutboundMessage;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RegisteredMessage;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * Netty buffers in memory registered once on the protection domain that RDMA connections share
 * ({@link RdmaLoopResources#protectionDomain}), so that RSocket frames over them are sent with no
 * copy. Give it to {@link RdmaClientTransport#allocator} and {@link RdmaServerTransport#allocator}:
 * their connections' {@code alloc()} is then this allocator, RSocket's frame headers come from it,
 * and a frame whose bytes all lie in it (header, metadata, data: build payloads with
 * {@code ByteBufPayload.create(alloc.buffer(size).writeBytes(...))}) goes out as SENDs that gather
 * straight from it. The frame is released once those sends completed, not before.
 *
 * <pre>{@code
 * ProtectionDomain pd = loops.protectionDomain(RdmaDevices.provider("native"), "rxe0");
 * RegisteredByteBufAllocator alloc = RegisteredByteBufAllocator.create(pd, 64 << 20);
 * RdmaServerTransport transport = RdmaServerTransport.create(server.runOn(loops)).allocator(alloc);
 * }</pre>
 *
 * <p>Bounded: one slab of {@code capacity} bytes, in power-of-two blocks from 64 bytes, pooled.
 * A buffer that does not fit (the slab is full, or it is larger than the slab) comes from
 * unregistered memory instead, counted by {@link #unregisteredBuffers()}: frames over it are
 * copied, as without this allocator. Allocate buffers at the size they need: one that grows past
 * its block moves to unregistered memory too. Direct buffers only: a heap buffer asked for
 * explicitly ({@code heapBuffer()}) is an ordinary one.
 *
 * <p>{@link #dispose()} refuses further buffers (a {@link ResourceClosedException}) and frees the
 * slab (deregisters it and frees its memory) once the last buffer of it is released; until then
 * buffers still in use stay valid. Dispose it before the loop resources whose protection domain it
 * is registered on. Thread-safe.
 */
public final class RegisteredByteBufAllocator extends AbstractByteBufAllocator implements Disposable {
  /** The slab's size when none is given: 16 MiB. */
  public static final long DEFAULT_CAPACITY = 16L << 20;

  private final RegisteredSlab slab;
  private final LongAdder unregistered = new LongAdder();
  private volatile boolean disposed;

  private RegisteredByteBufAllocator(RegisteredSlab slab) {
    super(true);
    this.slab = slab;
  }

  /** An allocator whose slab of {@value #DEFAULT_CAPACITY} bytes is registered on {@code pd} now. */
  public static RegisteredByteBufAllocator create(ProtectionDomain pd) {
    return create(pd, DEFAULT_CAPACITY);
  }

  /**
   * An allocator whose slab of {@code capacity} bytes (64 .. 2^31 - 1) is registered on
   * {@code pd} now, for local access only: peers read none of it.
   *
   * @throws IllegalArgumentException for a capacity out of range
   */
  public static RegisteredByteBufAllocator create(ProtectionDomain pd, long capacity) {
    return new RegisteredByteBufAllocator(new RegisteredSlab(Objects.requireNonNull(pd, "pd"), capacity));
  }

  /** The slab's registration: the memory all registered buffers of this allocator lie in. */
  public MemoryRegion region() {
    return slab.region();
  }

  /** Bytes of the slab. */
  public long capacity() {
    return slab.capacity();
  }

  /** Bytes of the slab in buffers not yet released (whole blocks). */
  public long usedBytes() {
    return slab.usedBytes();
  }

  /** Buffers that came from unregistered memory so far, the slab having no room for them. */
  public long unregisteredBuffers() {
    return unregistered.sum();
  }

  /** Whether the slab is freed: disposed, and every buffer of it released. */
  public boolean isFreed() {
    return slab.isFreed();
  }

  @Override
  public boolean isDirectBufferPooled() {
    return true;
  }

  @Override
  protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    checkOpen();
    return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
  }

  @Override
  protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    checkOpen();
    int sizeClass = RegisteredSlab.sizeClass(initialCapacity);
    ByteBuffer block = slab.take(sizeClass);
    if (block == null) {
      unregistered.increment();
      return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
    }
    if (block.capacity() > maxCapacity) {
      block.limit(maxCapacity);
    }
    return new SlabByteBuf(this, slab, block, sizeClass, maxCapacity);
  }

  private void checkOpen() {
    if (disposed) {
      throw new ResourceClosedException("RegisteredByteBufAllocator (disposed: make buffers with another allocator)");
    }
  }

  /**
   * {@code frame}'s readable bytes as a message sent straight from the slab, which releases the
   * frame once its sends completed; null when some byte lies outside the slab, or the bytes are in
   * more pieces than a send gathers ({@link RegisteredMessage#MAX_RANGES}): such a frame is copied.
   *
   * @throws IllegalStateException (Netty's {@code IllegalReferenceCountException}) when a part of the frame was released already
   */
  @Nullable RegisteredMessage messageOf(ByteBuf frame) {
    if (frame.readableBytes() == 0 || frame.nioBufferCount() < 1) {
      return null;
    }
    long[] offsets = new long[RegisteredMessage.MAX_RANGES];
    int[] lengths = new int[RegisteredMessage.MAX_RANGES];
    int n = 0;
    for (ByteBuffer b : frame.nioBuffers()) {
      int length = b.remaining();
      if (length == 0) {
        continue;
      }
      if (!b.isDirect()) {
        return null;
      }
      long at = slab.offsetOf(MemorySegment.ofBuffer(b).address(), length);
      if (at < 0) {
        return null;
      }
      if (n > 0 && offsets[n - 1] + lengths[n - 1] == at) { // adjacent pieces make one range
        lengths[n - 1] += length;
      } else if (n == RegisteredMessage.MAX_RANGES) {
        return null;
      } else {
        offsets[n] = at;
        lengths[n++] = length;
      }
    }
    return n == 0 ? null : OutboundMessage.gather(slab.region(), Arrays.copyOf(offsets, n), Arrays.copyOf(lengths, n),
        frame::release);
  }

  /** Refuses further buffers; the slab is freed once its last buffer is released (now, if none is out). */
  @Override
  public void dispose() {
    disposed = true;
    slab.close();
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  public String toString() {
    return "RegisteredByteBufAllocator{" + usedBytes() + " of " + capacity() + " bytes in use, region=" + region() + "}";
  }
}
