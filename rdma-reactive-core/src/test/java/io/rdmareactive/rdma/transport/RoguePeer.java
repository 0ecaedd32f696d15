package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A peer built on the verbs API and the connection SPI, not on the transport: it says a valid
 * hello (or none), then posts whatever SENDs it is told to, with any header, ignoring credits. It
 * posts a few receives so that the victim's credit updates do not stall on it, or none at all.
 */
final class RoguePeer implements AutoCloseable {
  static final int BUFFER = 4096;

  private final Arena arena = Arena.ofShared();
  private final Endpoint endpoint;
  private final MemoryRegion region;
  private final SendRequest send = new SendRequest();
  private long wrId;

  private RoguePeer(Endpoint endpoint) {
    this.endpoint = endpoint;
    MemorySegment memory = arena.allocate(2L * BUFFER, 64);
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
    byte[] hello = new Protocol.Hello(BUFFER, bufferCount, 1 << 20).encode();
    Endpoint ep = cp.connect(server, new EndpointOptions(64, 8, 0, hello), wait).block(wait);
    RoguePeer rogue = new RoguePeer(ep);
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

  /** Posts a SEND of {@code length} bytes with {@code immediate} as its header. */
  void send(int immediate, int length) {
    endpoint.queuePair().postSend(send.send(++wrId, region, 0, length).opcode(SendRequest.Opcode.SEND_WITH_IMM)
        .immediate(immediate));
  }

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
