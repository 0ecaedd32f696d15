package io.rdmareactive.rsocket;

import io.netty.buffer.UnpooledDirectByteBuf;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A buffer over one block of a {@link RegisteredSlab}, which it gives back on its last release.
 * Netty's direct buffer over a given {@link ByteBuffer} does the rest: it reads and writes through
 * that buffer (bounds and the slab's lifetime checked by the JDK), and reports no memory address,
 * so no code reaches the memory but through it. One that grows past its block moves to memory of
 * its own (unregistered: a frame over it is copied when sent); the block still goes back when the
 * buffer is released.
 */
final class SlabByteBuf extends UnpooledDirectByteBuf {
  private final RegisteredSlab slab;
  private final long at;
  private final int sizeClass;

  SlabByteBuf(RegisteredByteBufAllocator alloc, RegisteredSlab slab, ByteBuffer block, int sizeClass, int maxCapacity) {
    super(alloc, block, maxCapacity);
    this.slab = slab;
    this.at = slab.offsetOf(MemorySegment.ofBuffer(block).address(), block.capacity());
    this.sizeClass = sizeClass;
    clear(); // the wrapping constructor counts the block as written
  }

  @Override
  protected void deallocate() {
    super.deallocate();
    slab.giveBack(at, sizeClass);
  }
}
