package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;

/** A message in heap memory: reassembled from fragments, or rescued off a closing connection's buffers. */
final class HeapMessage implements RdmaMessage {
  final byte[] bytes;

  HeapMessage(byte[] bytes) {
    this.bytes = bytes;
  }

  @Override
  public int length() {
    return bytes.length;
  }

  @Override
  public MemorySegment segment() {
    return MemorySegment.ofArray(bytes).asReadOnly();
  }

  @Override
  public byte[] toByteArray() {
    return bytes.clone();
  }

  @Override
  public void release() {}
}
