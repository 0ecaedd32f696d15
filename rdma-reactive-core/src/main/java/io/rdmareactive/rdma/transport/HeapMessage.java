package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * A message in heap memory: reassembled from fragments, or rescued off a closing connection's
 * buffers. Its bytes are its own, so a segment taken before the release reads them for as long as
 * it is reachable; reads through the message after the release fail, as a received view's do.
 */
final class HeapMessage implements RdmaMessage {
  private final byte[] bytes;
  private volatile boolean released;

  HeapMessage(byte[] bytes) {
    this.bytes = bytes;
  }

  @Override
  public int length() {
    return bytes.length;
  }

  @Override
  public MemorySegment segment() {
    checkUnreleased();
    return MemorySegment.ofArray(bytes).asReadOnly();
  }

  @Override
  public byte[] toByteArray() {
    checkUnreleased();
    return bytes.clone();
  }

  /** The bytes themselves, not a copy (a send copies them into its buffers); fails once released. */
  byte[] bytes() {
    checkUnreleased();
    return bytes;
  }

  private void checkUnreleased() {
    if (released) {
      throw new IllegalStateException("message already released");
    }
  }

  @Override
  public void release() {
    released = true;
  }
}
