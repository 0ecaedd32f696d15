package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A peer built on the verbs API and the connection SPI, not on the transport: it says a valid
 * hello (or none), then posts whatever SENDs it is told to, with any header, ignoring credits, or
 * keeps to the credits the victim grants (polling its CQ for them) while it floods. It posts a few
 * receives so that the victim's credit updates do not stall on it, or none at all.
 */
final class RoguePeer implements AutoCloseable {
  static final int BUFFER = 4096;
  /** Work request ids of SENDs start here; receives' are 1000 + i. */
  private static final long SEND_IDS = 1L << 40;

  private final Arena arena = Arena.ofShared();
  private final Endpoint endpoint;
  private final MemoryRegion region;
  private final SendRequest send = new SendRequest();
  private final ReceiveRequest receive = new ReceiveRequest();
  private long wrId;
  // Credit bookkeeping of sendWithinCredits: the victim's reserve is ours from the start, and the
  // receives posted beyond the reserve are ours to grant.
  private long credits = Protocol.RESERVE;
  private int grantsPending;
  private int sendsInFlight;
  private boolean broken;
  private final java.util.List<MemoryRegion> extra = new java.util.ArrayList<>();

  private final MemorySegment memory;

  private RoguePeer(Endpoint endpoint) {
    this.endpoint = endpoint;
    this.memory = arena.allocate(2L * BUFFER, 64);
    this.region = endpoint.protectionDomain().registerMemory(memory, Access.local());
  }

  /** Connects with a hello announcing {@code bufferCount} buffers of {@link #BUFFER} bytes. */
  static RoguePeer connect(ConnectionProvider cp, InetSocketAddress server, int bufferCount, Duration wait) {
    return connect(cp, server, bufferCount, 8, wait);
  }

  /**
   * As {@link #connect(ConnectionProvider, InetSocketAddress, int, Duration)}, posting
   * {@code receives} receives (0: a peer whose hello promises buffers it never posts, so every
   * SEND to it meets "receiver not ready").
   */
  static RoguePeer connect(ConnectionProvider cp, InetSocketAddress server, int bufferCount, int receives,
      Duration wait) {
    // Three transport retries, not the default six: the connecting side's count governs both
    // ends, and a victim probing a vanished rogue then gives up in ~4 ACK timeouts (~10 s on rxe).
    return connect(cp, server, bufferCount, receives, 3, EndpointOptions.DEFAULT_RNR_RETRY, wait);
  }

  /**
   * As {@link #connect(ConnectionProvider, InetSocketAddress, int, int, Duration)}, asking for
   * {@code retryCount} transport and {@code rnrRetry} RNR retries (7: forever, on rxe both), which
   * the CM applies to the server's side of the connection too.
   */
  static RoguePeer connect(ConnectionProvider cp, InetSocketAddress server, int bufferCount, int receives,
      int retryCount, int rnrRetry, Duration wait) {
    byte[] hello = new Protocol.Hello(BUFFER, bufferCount, 1 << 20).encode();
    Endpoint ep = cp.connect(server, new EndpointOptions(64, 8, 0, hello)
        .withRetries(retryCount, rnrRetry), wait).block(wait);
    RoguePeer rogue = new RoguePeer(ep);
    rogue.grantsPending = Math.max(0, receives - Protocol.RESERVE);
    try {
      for (int i = 0; i < receives; i++) {
        ep.queuePair().postReceive(new ReceiveRequest().set(1000 + i, rogue.region, BUFFER, 64));
      }
      ep.establish().block(wait);
      return rogue;
    } catch (RuntimeException e) {
      rogue.close();
      throw e;
    }
  }

  /** Writes {@code bytes} where the next SEND starts (a batch, say); returns their length. */
  int write(byte[] bytes) {
    MemorySegment.copy(bytes, 0, memory, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
    return bytes.length;
  }

  /**
   * Posts a SEND of {@code bytes}, with {@code immediate} as its header, from the second half of
   * this peer's memory: a SEND posted before from the first half keeps its bytes while in flight.
   */
  void sendFromSecondHalf(int immediate, byte[] bytes) {
    MemorySegment.copy(bytes, 0, memory, java.lang.foreign.ValueLayout.JAVA_BYTE, BUFFER, bytes.length);
    endpoint.queuePair().postSend(send.send(SEND_IDS + ++wrId, region, BUFFER, bytes.length)
        .opcode(SendRequest.Opcode.SEND_WITH_IMM).immediate(immediate));
  }

  /** Posts a SEND of {@code length} bytes with {@code immediate} as its header. */
  void send(int immediate, int length) {
    endpoint.queuePair().postSend(send.send(SEND_IDS + ++wrId, region, 0, length)
        .opcode(SendRequest.Opcode.SEND_WITH_IMM).immediate(immediate));
  }

  /**
   * Posts a zero-byte RDMA WRITE with immediate {@code immediate}: it consumes one of the victim's
   * receives, as a SEND would, but puts nothing in it (a zero-byte write names no remote memory).
   */
  void writeWithImmediate(int immediate) {
    endpoint.queuePair().postSend(send.reset(SEND_IDS + ++wrId, SendRequest.Opcode.RDMA_WRITE_WITH_IMM)
        .remote(0, 0).immediate(immediate));
  }

  /**
   * Sends up to {@code updates} credit-only messages, each on a credit the victim granted and
   * granting back what this side reposted (0 or 1 each, after the first): what a peer needs to
   * keep a victim answering update with update. Returns those sent before the victim stopped
   * granting (waiting up to {@code stall}) or the connection ended.
   */
  long sendCreditUpdatesWithinCredits(long updates, Duration stall) {
    long sent = 0;
    while (sent < updates && awaitCredit(stall)) {
      send(Protocol.immediate(grantsPending, false, true), 0);
      grantsPending = 0;
      credits--;
      sendsInFlight++;
      sent++;
    }
    return sent;
  }

  /**
   * Plays the credit protocol by the letter, as far as sending goes: sends {@code messages}
   * messages of {@code fragments} SENDs of {@code length} bytes (all but the last with MORE), each
   * SEND on a credit the victim granted, using every credit (the last one too, which a polite
   * peer keeps for a credit update), and grants back each receive it reposts. Waits up to {@code
   * stall} for a credit; returns the SENDs posted, fewer than asked where the victim stopped
   * granting (or the connection ended).
   */
  long sendWithinCredits(long messages, int fragments, int length, Duration stall) {
    return sendWithinCredits(messages, fragments, true, length, stall);
  }

  /**
   * As {@link #sendWithinCredits(long, int, int, Duration)}, but for one message that stops
   * mid-way: {@code fragments} SENDs, every one with MORE, and never the last.
   */
  long sendFirstFragmentsWithinCredits(int fragments, int length, Duration stall) {
    return sendWithinCredits(1, fragments, false, length, stall);
  }

  private long sendWithinCredits(long messages, int fragments, boolean finish, int length, Duration stall) {
    long sent = 0;
    for (long m = 0; m < messages; m++) {
      for (int f = 0; f < fragments; f++) {
        if (!awaitCredit(stall)) {
          return sent;
        }
        boolean more = !finish || f < fragments - 1;
        if (f == 0 && more) { // a fragmented message's first SEND declares its length, and grants nothing
          send(Protocol.firstFragment((finish ? fragments : fragments + 1L) * length), length);
        } else {
          send(Protocol.immediate(grantsPending, more, false), length);
          grantsPending = 0;
        }
        credits--;
        sendsInFlight++;
        sent++;
      }
    }
    return sent;
  }

  /**
   * Posts a SEND with header {@code immediate} on a credit the victim granted (waiting up to
   * {@code wait} for one), so that it meets a posted receive and the victim reads the header
   * rather than failing at "receiver not ready". False when no credit came.
   */
  boolean sendOnACredit(int immediate, int length, Duration wait) {
    if (!awaitCredit(wait)) {
      return false;
    }
    send(immediate, length);
    credits--;
    sendsInFlight++;
    return true;
  }

  /** Polls until a credit and a free send slot are there; false after {@code stall} without one. */
  private boolean awaitCredit(Duration stall) {
    long deadline = System.nanoTime() + stall.toNanos();
    for (;;) {
      endpoint.completionQueue().poll(16, wc -> {
        if (wc.wrId() < SEND_IDS) { // a receive: a credit update (the victim sends no data here)
          if (wc.status() != WorkCompletion.Status.SUCCESS) {
            broken = true;
            return;
          }
          credits += wc.immediateData() & Protocol.GRANT_MASK;
          endpoint.queuePair().postReceive(receive.set(wc.wrId(), region, BUFFER, 64));
          grantsPending++;
        } else {
          sendsInFlight--;
          if (wc.status() != WorkCompletion.Status.SUCCESS) {
            broken = true;
          }
        }
      });
      if (broken) {
        return false;
      }
      if (credits > 0 && sendsInFlight < 32) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        return false;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(20_000);
    }
  }

  /** Registers {@code bytes} in memory of their own that the victim may READ; closed with this peer. */
  MemoryRegion readable(byte[] bytes) {
    MemorySegment m = arena.allocate(bytes.length, 64);
    MemorySegment.copy(bytes, 0, m, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
    MemoryRegion r = endpoint.protectionDomain().registerMemory(m, java.util.Set.of(Access.REMOTE_READ));
    extra.add(r);
    return r;
  }

  /** Writes a rendezvous descriptor where the next SEND starts; returns its length. */
  int describe(int id, int length, long address, int key) {
    return write(java.nio.ByteBuffer.allocate(Protocol.DESCRIPTOR).putInt(id).putInt(length).putLong(address).putInt(key)
        .putInt(0).array());
  }

  /** A SEND the victim sent: its header and bytes. */
  record Received(int immediate, byte[] bytes) {}

  /**
   * Waits up to {@code wait} for the victim's next SEND that is not a credit update (reposting
   * the receives it takes, counting their grants); null when none came.
   */
  Received awaitSend(Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    Received[] got = new Received[1];
    while (got[0] == null && !broken && System.nanoTime() < deadline) {
      endpoint.completionQueue().poll(1, wc -> {
        if (wc.wrId() >= SEND_IDS) {
          sendsInFlight--;
          return;
        }
        if (wc.status() != WorkCompletion.Status.SUCCESS) {
          broken = true;
          return;
        }
        credits += wc.immediateData() & Protocol.GRANT_MASK;
        if ((wc.immediateData() & Protocol.CREDIT) == 0) {
          got[0] = new Received(wc.immediateData(), memory.asSlice(BUFFER, wc.byteLength())
              .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }
        endpoint.queuePair().postReceive(receive.set(wc.wrId(), region, BUFFER, 64));
        grantsPending++;
      });
      java.util.concurrent.locks.LockSupport.parkNanos(20_000);
    }
    return got[0];
  }

  /**
   * Posts an RDMA READ of {@code length} bytes (at most {@link #BUFFER}) of the victim's memory at
   * ({@code address}, {@code key}) into this peer's memory, and waits for its completion: its
   * status, or null when none came within {@code wait}. The bytes read are in {@link #lastRead}.
   */
  WorkCompletion.Status read(long address, int key, int length, Duration wait) {
    endpoint.queuePair().postSend(send.read(SEND_IDS + ++wrId, region, 0, length, address, key));
    long id = SEND_IDS + wrId;
    long deadline = System.nanoTime() + wait.toNanos();
    WorkCompletion.Status[] status = new WorkCompletion.Status[1];
    while (status[0] == null && System.nanoTime() < deadline) {
      endpoint.completionQueue().poll(1, wc -> {
        if (wc.wrId() == id) {
          status[0] = wc.status();
        }
      });
      java.util.concurrent.locks.LockSupport.parkNanos(20_000);
    }
    lastRead = memory.asSlice(0, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    return status[0];
  }

  /** The bytes the last {@link #read} put in this peer's memory. */
  byte[] lastRead = new byte[0];

  /**
   * Dies without a word: its QP goes to ERROR and no disconnect is sent, as when its host or the
   * path to it dies. The victim's adapter gets no acknowledgement from it any more.
   */
  void vanish() {
    endpoint.queuePair().toError();
  }

  @Override
  public void close() {
    try {
      extra.forEach(MemoryRegion::close);
      region.close();
    } finally {
      try {
        endpoint.close();
      } finally {
        arena.close();
      }
    }
  }
}
