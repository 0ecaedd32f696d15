package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.transport.RdmaMessage;
import java.lang.foreign.MemorySegment;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * For layers built on the transport that read received messages in place and check liveness
 * themselves (the RSocket module's zero-copy {@code ByteBuf}): a message's memory without the
 * per-message scope of {@link RdmaMessage#segment()}, whose close costs microseconds per message.
 * The caller must hold the message unreleased for as long as it reads, and refuse reads once it
 * released it: nothing else stops such a read from seeing the peer's next message.
 */
public final class MessageMemory {
  private static volatile @Nullable Function<RdmaMessage, MemorySegment> access;

  private MessageMemory() {}

  /** The transport's hook, installed once when its received-message class loads. */
  public static void install(Function<RdmaMessage, MemorySegment> unscoped) {
    if (access == null) {
      access = unscoped;
    }
  }

  /** {@code message}'s bytes, read-only, valid while it is unreleased; see the class comment. */
  public static MemorySegment unscoped(RdmaMessage message) {
    Function<RdmaMessage, MemorySegment> a = access;
    return a != null ? a.apply(message) : message.segment();
  }
}
