package io.rdmareactive.rdma.memory;

import java.lang.foreign.MemorySegment;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * For layers built on the transport that read received messages in place and check liveness
 * themselves (the RSocket module's zero-copy {@code ByteBuf}): a message's memory without the
 * per-message scope of {@code RdmaMessage.segment()}, whose close costs microseconds per message.
 * The caller must hold the message unreleased for as long as it reads, and refuse reads once it
 * released it: nothing else stops such a read from seeing the peer's next message.
 *
 * <p>Typed on {@code Object} so that this package, below the transport, does not name the
 * transport's types: the transport installs the accessor, and messages it does not know get
 * {@code null}.
 */
public final class MessageMemory {
  private static volatile @Nullable Function<Object, @Nullable MemorySegment> access;

  private MessageMemory() {}

  /** The transport's hook, installed once when its received-message class loads. */
  public static void install(Function<Object, @Nullable MemorySegment> unscoped) {
    if (access == null) {
      access = unscoped;
    }
  }

  /**
   * {@code message}'s bytes, read-only, valid while it is unreleased (see the class comment), or
   * null for a message that is not a received one of this transport.
   */
  public static @Nullable MemorySegment unscoped(Object message) {
    Function<Object, @Nullable MemorySegment> a = access;
    return a != null ? a.apply(message) : null;
  }
}
