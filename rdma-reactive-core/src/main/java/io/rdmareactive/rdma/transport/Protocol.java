package io.rdmareactive.rdma.transport;

import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The framed protocol's wire format. Every SEND carries its header in the 32-bit immediate data,
 * the payload being the message's bytes, or a batch of messages:
 *
 * <pre>
 *   bits  0..15  credits granted: receive buffers posted since the last grant
 *   bit  16      MORE: a fragment; the message goes on in the next SEND
 *   bit  17      CREDIT: a credit update only, no payload, not a message
 *   bit  18      BATCH: several whole messages in one SEND (see {@link BatchDecoder})
 *   bit  19      RNDV: a rendezvous descriptor, the peer pulls the message by RDMA READ
 *   bit  20      DONE: the answer to a descriptor, its READs are done
 *   bits 21..31  0 (reserved)
 * </pre>
 * (but a fragmented message's first SEND, whose header is a length: see below).
 *
 * <p>A rendezvous descriptor's payload is {@link #DESCRIPTOR} bytes, big-endian: the message's id,
 * its length, the address and the remote key that open it (and 4 zero bytes); a DONE's is
 * {@link #DONE_LENGTH} bytes, the id. Both take a credit, as any SEND (see {@link RendezvousSender}).
 *
 * <p>A batch's payload is a {@link #BATCH_COUNT}-byte message count, then each message as a
 * {@link #BATCH_LENGTH}-byte length and its bytes (big-endian, every length at least 1). A lone
 * message goes without it, as a plain SEND.
 *
 * <p>A fragmented message's first SEND (MORE set, no message in progress) carries no grants and no
 * other flag: its header is {@link #firstFragment the message's whole length}, bits 0..15 and
 * 17..31 (MORE, bit 16, between them), so that the receiver checks it against its limits and
 * allocates the message once, before the rest arrives, and every fragment carries buffer-sized
 * data: a message of k buffers takes k SENDs. Its grants wait for the next SEND. The receiver
 * tells a first fragment from the others by the order they arrive in (see {@link FragmentReceiver}).
 *
 * <p>The connection handshake's private data (both ways) is a {@link Hello}: magic, version, the
 * sender's receive buffer size (the peer fragments to it), receive buffer count and maximum
 * message size.
 */
final class Protocol {
  static final int GRANT_MASK = 0xFFFF;
  static final int MORE = 1 << 16;
  static final int CREDIT = 1 << 17;
  static final int BATCH = 1 << 18;
  static final int RNDV = 1 << 19;
  static final int DONE = 1 << 20;
  static final int RESERVED_MASK = 0xFF00_0000 | 0x00E0_0000;
  /** Bytes of a rendezvous descriptor: id, length, address, key, padding. */
  static final int DESCRIPTOR = 24;
  /** Bytes of a DONE: the id. */
  static final int DONE_LENGTH = 4;

  static final int MAGIC = 0x52524D41; // "RRMA"
  /**
   * 5: a fragmented message's first SEND declares its length in its header, not in its bytes; 4: a
   * message from registered memory may come by rendezvous (RNDV, DONE); 3: a SEND may carry a
   * batch of messages (2: a fragmented message declares its length in its first fragment). A peer of another version is refused, naming both: one library version on
   * both ends is the supported deployment, and serving two formats would double the untrusted
   * input this side parses.
   */
  static final byte VERSION = 5;
  /** The largest length a first fragment's header can declare: 31 bits, above MAX_MESSAGE_SIZE's cap. */
  static final long MAX_DECLARED = (1L << 31) - 1;
  /** Bytes of a batch's message count, at its start. */
  static final int BATCH_COUNT = 4;
  /** Bytes of the length before each message of a batch. */
  static final int BATCH_LENGTH = 4;
  static final int HELLO_LENGTH = 20;

  /**
   * Receive credits each side holds back beyond its {@code BUFFER_COUNT}: the receives posted before
   * the connection is established, which carry credit updates when every buffer is taken, so the
   * window can always reopen.
   */
  static final int RESERVE = 2;

  /** The receives (and sends) a side with {@code bufferCount} buffers posts: the reserve included. */
  static int withReserve(int bufferCount) {
    return bufferCount + RESERVE;
  }

  private Protocol() {}

  static int immediate(int grants, boolean more, boolean credit) {
    return (grants & GRANT_MASK) | (more ? MORE : 0) | (credit ? CREDIT : 0);
  }

  /** The header of a fragmented message's first SEND: MORE, and the message's {@code length} around it. */
  static int firstFragment(long length) {
    if (length < 0 || length > MAX_DECLARED) {
      throw new IllegalArgumentException("a first fragment declares 0 .. " + MAX_DECLARED + " bytes, not " + length);
    }
    return (int) (length & GRANT_MASK) | MORE | (int) (length >>> 16) << 17;
  }

  /** The length a first fragment's header {@code imm} declares (see {@link #firstFragment}). */
  static long declared(int imm) {
    return (imm & GRANT_MASK) | (long) (imm >>> 17) << 16;
  }

  /**
   * The wire protocol version that {@code data} (a hello or a reject) says its sender speaks, or
   * -1 when it is not one of ours at all.
   */
  static int versionOf(byte[] data) {
    return data.length > 4 && ByteBuffer.wrap(data).getInt() == MAGIC ? data[4] & 0xFF : -1;
  }

  /** Why a peer speaking version {@code peer} is refused, naming both versions. */
  static String versionMismatch(int peer) {
    return "peer speaks wire protocol v" + peer + ", this side v" + VERSION;
  }

  /** What one side tells the other when connecting. */
  record Hello(int bufferSize, int bufferCount, int maxMessageSize) {
    byte[] encode() {
      return ByteBuffer.allocate(HELLO_LENGTH).putInt(MAGIC).put(VERSION).put((byte) 0).putShort((short) 0)
          .putInt(bufferSize).putInt(bufferCount).putInt(maxMessageSize).array();
    }

    /** The hello in {@code data} (zero padding allowed), or null when it is not one of ours. */
    static @Nullable Hello decode(byte[] data) {
      if (data.length < HELLO_LENGTH) {
        return null;
      }
      ByteBuffer b = ByteBuffer.wrap(data);
      if (b.getInt() != MAGIC || b.get() != VERSION) {
        return null;
      }
      b.get();
      b.getShort();
      int size = b.getInt();
      int count = b.getInt();
      int max = b.getInt();
      // Within what RdmaOption allows: a peer announcing more buffers could grant itself nearly
      // unbounded credits before the over-grant check (CreditWindow) caught it.
      return size >= 64 && size <= 1 << 24 && count >= 1 && count <= 16_384 && max >= 1 ? new Hello(size, count, max) : null;
    }
  }

  /**
   * Why a server refused a connect request, in the reject's private data (librdmacm carries it
   * to the initiator's REJECTED event), so that the client's REFUSED says why.
   */
  enum Reject {
    TOO_MANY_CONNECTIONS("it serves its maximum of connections (RdmaOption.MAX_CONNECTIONS)"),
    TOO_MANY_HANDSHAKES("too many handshakes are pending there (RdmaOption.MAX_PENDING_HANDSHAKES)"),
    BAD_HELLO("the connect request had no valid rdma-reactive hello (a raw peer needs RdmaOption.RAW)"),
    SHUTTING_DOWN("the server is shutting down"),
    TOO_MANY_RETRIES("it asked for more transport or RNR retries than the server allows, which the CM would"
        + " apply to the server's side too (RdmaOption.RETRY_COUNT, RdmaOption.RNR_RETRY)"),
    /** Last: the codes before it mean what they meant in earlier versions. */
    WRONG_VERSION("the connect request's hello is of another wire protocol version");

    static final int LENGTH = 8;
    private static final byte KIND = 'R';

    final String why;

    Reject(String why) {
      this.why = why;
    }

    byte[] encode() {
      return ByteBuffer.allocate(LENGTH).putInt(MAGIC).put(VERSION).put(KIND).put((byte) ordinal()).put((byte) 0)
          .array();
    }

    /**
     * The reject reason in {@code data}, or null when it is not one of ours (zero padding
     * allowed); of any version, which {@link Protocol#versionOf} then tells.
     */
    static @Nullable Reject decode(byte[] data) {
      if (data.length < LENGTH) {
        return null;
      }
      ByteBuffer b = ByteBuffer.wrap(data);
      if (b.getInt() != MAGIC || b.get() == 0 || b.get() != KIND) {
        return null;
      }
      int code = b.get() & 0xFF;
      return code < values().length ? values()[code] : null;
    }
  }
}
