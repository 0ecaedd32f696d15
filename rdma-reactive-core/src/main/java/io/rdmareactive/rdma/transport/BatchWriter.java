package io.rdmareactive.rdma.transport;

/**
 * Packs whole messages into one send buffer, the batch that {@link BatchDecoder} reads: a message
 * count, then each message as its length and its bytes. Each message is written where a lone
 * message's SEND could start ({@link #HEADER} bytes in, for the first), so a batch that gets no
 * second message goes as a plain SEND of that message, with no framing and no copy more. Plain
 * state driven from the connection's drain; it never waits for messages, the sender closing the
 * batch as soon as nothing more is queued.
 */
final class BatchWriter {
  /** Bytes before the first message's data: the count and the first length. */
  static final int HEADER = Protocol.BATCH_COUNT + Protocol.BATCH_LENGTH;

  private final RegisteredBuffers buffers;
  private final SendCopier copier;
  private int index = -1;
  private int count;
  private int used;
  private int firstLength;
  private long bytes;

  BatchWriter(RegisteredBuffers buffers, SendCopier copier) {
    this.buffers = buffers;
    this.copier = copier;
  }

  /** Whether a message of {@code size} bytes may go in a batch of at most {@code chunk} bytes: not empty, and fitting with its framing. */
  static boolean batchable(long size, int chunk) {
    return size >= 1 && size <= chunk - HEADER;
  }

  boolean isOpen() {
    return index >= 0;
  }

  /** Whether a message of {@code size} bytes fits in the open batch, of at most {@code chunk} bytes. */
  boolean fits(long size, int chunk) {
    return used + Protocol.BATCH_LENGTH + size <= chunk;
  }

  /** Opens a batch in send buffer {@code index}. */
  void open(int index) {
    this.index = index;
    count = 0;
    used = Protocol.BATCH_COUNT;
    bytes = 0;
  }

  /** Copies sendable {@code m} of {@code length} bytes in, after its length. */
  void append(Object m, int length) {
    long at = buffers.sendOffset(index) + used;
    copier.copy(m, 0, index, used + Protocol.BATCH_LENGTH, length);
    // after the copy: an OutboundMessage that writes all of its buffer cannot clobber it
    buffers.sendMemory(index).set(BatchDecoder.INT, at, length);
    used += Protocol.BATCH_LENGTH + length;
    if (count++ == 0) {
      firstLength = length;
    }
    bytes += length;
  }

  /** The open batch's send buffer. */
  int index() {
    return index;
  }

  /** Messages in the open batch. */
  int count() {
    return count;
  }

  /** Message bytes in the open batch, framing not counted. */
  long bytes() {
    return bytes;
  }

  /** Where the SEND starts in the buffer: at the count, or at a lone message's data. */
  long sendOffset() {
    return count == 1 ? HEADER : 0;
  }

  /** The SEND's length: the whole batch, or a lone message alone. */
  int sendLength() {
    return count == 1 ? firstLength : used;
  }

  /** Closes the batch, writing its count; whether it is a batch (several messages) rather than a lone message. */
  boolean close() {
    boolean batched = count > 1;
    if (batched) {
      buffers.sendMemory(index).set(BatchDecoder.INT, buffers.sendOffset(index), count);
    }
    index = -1;
    return batched;
  }

  /** Drops the open batch (disconnecting): its buffer, or -1 when none was open. */
  int abandon() {
    int i = index;
    index = -1;
    return i;
  }
}
