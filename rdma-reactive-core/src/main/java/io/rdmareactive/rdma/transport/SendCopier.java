package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * What an item given to {@code send} becomes on its way into a send buffer: the form its bytes are
 * copied from ({@link #toSendable}), the copy itself, and the release of what held memory. Plain
 * state driven from the connection's drain.
 */
final class SendCopier {
  private final ConnectionOperations connection;
  private final RegisteredBuffers buffers;
  private final ConnectionCounters counters;
  private final int sendCount;
  /** Per send buffer, its memory alone (see {@link #ownBuffer}); null until an OutboundMessage is sent. */
  private MemorySegment @Nullable [] ownBuffers;

  SendCopier(ConnectionOperations connection, RegisteredBuffers buffers, ConnectionCounters counters, int sendCount) {
    this.connection = connection;
    this.buffers = buffers;
    this.counters = counters;
    this.sendCount = sendCount;
  }

  /** Copies {@code length} bytes at {@code from} in sendable {@code m} to {@code offset} in send buffer {@code index}. */
  void copy(Object m, long from, int index, long offset, int length) {
    MemorySegment to = buffers.sendMemory(index);
    long at = buffers.sendOffset(index) + offset;
    switch (m) {
      case byte[] b -> MemorySegment.copy(b, (int) from, to, ValueLayout.JAVA_BYTE, at, length);
      case ReceivedView v -> MemorySegment.copy(buffers.receiveMemory(v.index), buffers.receiveOffset(v.index) + v.start + from,
          to, at, length);
      case OutboundMessage o -> o.copyTo(from, ownBuffer(index, to), offset, length);
      default -> MemorySegment.copy((MemorySegment) m, from, to, at, length);
    }
    counters.bytesCopied(length);
  }

  /**
   * Send buffer {@code index} alone, as an {@link OutboundMessage} gets it to copy into: user code
   * that writes outside its range then meets the segment's bounds, not the buffers of other sends
   * in flight beside it in the chunk. One slice per buffer, made on its first use, so a copy
   * allocates nothing; the slice is the whole buffer, since a message's data may start after a
   * batch's framing.
   */
  private MemorySegment ownBuffer(int index, MemorySegment chunk) {
    MemorySegment[] own = ownBuffers;
    if (own == null) {
      own = ownBuffers = new MemorySegment[sendCount];
    }
    MemorySegment b = own[index];
    long offset = buffers.sendOffset(index);
    // A slot of the loop's send pool may be bound to another buffer, or chunk, than last time.
    if (b == null || b.address() != chunk.address() + offset || !b.scope().isAlive()) {
      b = own[index] = chunk.asSlice(offset, buffers.bufferSize);
    }
    return b;
  }

  /**
   * What the item's bytes are copied from, wrapping nothing where that is possible (a wrapper per
   * message would be an allocation per message): a byte[] and a message this connection received
   * into one of its buffers (no larger than {@code chunk}) are copied from directly (echo), the
   * latter released once copied.
   */
  Object toSendable(Object item, int chunk) {
    if (item instanceof RegisteredMessage r) {
      r.take(connection.protectionDomain()); // sent from its region, never copied: it holds the region until released
      return r;
    }
    if (item instanceof byte[] || item instanceof MemorySegment || item instanceof OutboundMessage) {
      return item;
    }
    if (item instanceof ReceivedView rv && rv.belongsTo(connection) && rv.length() <= chunk) {
      // A count of the sender's own until the copy is done: a release by the user meanwhile
      // (after a credit stall, say) cannot hand the buffer to the peer's next message underneath.
      if (!rv.retain()) {
        throw new IllegalStateException("message already released");
      }
      return rv;
    }
    if (item instanceof HeapMessage h) {
      return h.bytes();
    }
    return toSegment(item);
  }

  /** A sendable that holds memory until the transport is done with it gives it back. */
  static void release(Object sendable) {
    if (sendable instanceof ReceivedView v) {
      v.release();
      v.unref(); // the sender's count, taken in toSendable
    } else if (sendable instanceof OutboundMessage o) {
      o.release();
    }
  }

  static long lengthOf(Object sendable) {
    return switch (sendable) {
      case byte[] b -> b.length;
      case ReceivedView v -> v.length();
      case OutboundMessage o -> o.length();
      default -> ((MemorySegment) sendable).byteSize();
    };
  }

  private static MemorySegment toSegment(Object item) {
    return switch (item) {
      case byte[] b -> MemorySegment.ofArray(b);
      case ByteBuffer b -> MemorySegment.ofBuffer(b);
      case MemorySegment s -> s;
      case CharSequence s -> MemorySegment.ofArray(s.toString().getBytes(StandardCharsets.UTF_8));
      case RdmaMessage m -> {
        try {
          yield MemorySegment.ofArray(m.toByteArray());
        } finally {
          m.release();
        }
      }
      default -> throw new IllegalArgumentException("cannot send a " + item.getClass().getName()
          + ": send byte[], ByteBuffer, MemorySegment, CharSequence, RdmaMessage or OutboundMessage");
    };
  }
}
