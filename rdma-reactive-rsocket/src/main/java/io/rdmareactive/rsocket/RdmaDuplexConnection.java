package io.rdmareactive.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rsocket.DuplexConnection;
import io.rsocket.RSocketErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import java.net.SocketAddress;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An RSocket {@link DuplexConnection} over an {@link RdmaConnection}: one frame per RDMA message,
 * no length prefix (messages keep their boundaries, as WebSocket frames do). Frames received reach
 * RSocket as {@link SegmentByteBuf}s over the receive buffers, without a copy, released once
 * RSocket's {@code onNext} returned (it retains what it keeps); frames sent wait in
 * a bounded {@link FrameSender} until the transport has credits for them, and those that lie in a
 * {@link RegisteredByteBufAllocator} (then {@link #alloc()}) go without a copy.
 *
 * <p>Neither a close nor what waits can be held by a peer that withholds its credits: the frames
 * waiting are bounded in bytes as well as in number ({@link PendingLimit}), and the ERROR
 * frame a close sends waits at most {@link #ERROR_FRAME_DEADLINE} for a credit; the connection
 * then closes without it.
 */
final class RdmaDuplexConnection implements DuplexConnection {
  private static final Logger log = Loggers.getLogger(RdmaDuplexConnection.class);
  /** How long a close's ERROR frame may wait for a credit: the transport's default CLOSE_TIMEOUT. */
  static final Duration ERROR_FRAME_DEADLINE = Duration.ofSeconds(5);

  private final String side;
  private final RdmaConnection connection;
  private final FrameSender sender;
  private final PendingLimit limit;
  private final ByteBufAllocator alloc;
  private final Sinks.Empty<Void> onClose = Sinks.empty();
  private volatile @Nullable Throwable failure;

  /** Frames over {@code registered}'s memory (null: none) are sent without a copy; it is also {@link #alloc()}. */
  RdmaDuplexConnection(String side, RdmaConnection connection, PendingLimit limit,
      @Nullable RegisteredByteBufAllocator registered) {
    this.side = side;
    this.connection = connection;
    this.limit = limit;
    this.alloc = registered != null ? registered : ByteBufAllocator.DEFAULT;
    this.sender = new FrameSender(limit.frames(), limit.bytes(), registered);
    connection.outbound().send(sender).subscribe(null, this::sendFailed, connection::dispose);
    connection.onDispose().subscribe(null, e -> closed(), this::closed);
  }

  @Override
  public void sendFrame(int streamId, ByteBuf frame) {
    int outcome;
    int size = frame.readableBytes(); // read first: a frame refused is released
    try {
      outcome = sender.tryOffer(frame);
    } catch (RuntimeException e) { // a frame over memory the application released: the stream cannot go on
      fail(e);
      return;
    }
    if (outcome != FrameSender.QUEUED) {
      // Name the bound this frame passed, and the setting that raises it.
      int frames = sender.pending();
      boolean byCount = outcome == FrameSender.OVER_FRAMES;
      String setting = byCount ? "maxPendingFrames" : "maxPendingBytes";
      String bound = byCount ? limit.frames() + " frames" : limit.bytes() + " bytes";
      failLoudly(new IllegalStateException("RSocket over RDMA (" + side + "): " + frames + " frames of "
          + sender.pendingBytes() + " bytes already wait for the peer's credits, and a frame of " + size
          + " bytes more would pass " + setting + " (" + bound + "); closing the connection (raise " + setting
          + ", or let REQUEST_N times the frame size stay within both maxPendingFrames and maxPendingBytes)"));
    }
  }

  @Override
  public void sendErrorAndClose(RSocketErrorException e) {
    try {
      sender.offer(ErrorFrameCodec.encode(alloc, 0, e));
    } catch (RuntimeException noFrame) { // the registered allocator is disposed: close without the frame
      log.debug("rdma-reactive-rsocket: {}: no ERROR frame for the close", this, noFrame);
      connection.dispose();
      return;
    }
    sender.complete(); // the send completes once the error frame went out; then the connection closes
    // ... unless the peer grants no credit for it: then it closes without the frame, at the deadline.
    Disposable deadline = Mono.delay(ERROR_FRAME_DEADLINE).subscribe(x -> {
      log.debug("rdma-reactive-rsocket: {}: the peer granted no credit for the ERROR frame of the close in {} ms;"
          + " closing without it", this, ERROR_FRAME_DEADLINE.toMillis());
      connection.dispose();
    });
    connection.onDispose().subscribe(null, x -> deadline.dispose(), deadline::dispose);
  }

  @Override
  public Flux<ByteBuf> receive() {
    Flux<RdmaMessage> messages = connection.inbound().receive();
    return Flux.from(s -> messages.subscribe(new ReleasingFrames(Operators.toCoreSubscriber(s), alloc)));
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  /** The address the client connected to, or the server listens on (the transport tells no other). */
  @Override
  public SocketAddress remoteAddress() {
    return connection.address();
  }

  @Override
  public Mono<Void> onClose() {
    return onClose.asMono();
  }

  @Override
  public void dispose() {
    connection.dispose();
  }

  @Override
  public boolean isDisposed() {
    return connection.isDisposed();
  }

  /**
   * The send stopped: when the connection is going away (closed here, or reset by the peer) it
   * just closes, and {@link #onClose()} completes once it is freed, so that RSocket first sees
   * the frames that arrived before (an ERROR frame that explains the close); any other error (a
   * frame above MAX_MESSAGE_SIZE) closes the connection with that error.
   */
  private void sendFailed(Throwable e) {
    if (e instanceof ResourceClosedException || e instanceof ConnectionException || connection.isDisposed()) {
      connection.dispose();
    } else {
      fail(e);
    }
  }

  /**
   * {@link #fail}, said at WARN too: a bound the application sizes (REQUEST_N against
   * maxPendingFrames and maxPendingBytes) ended the connection, and the requester sees only that
   * it closed.
   */
  private void failLoudly(Throwable e) {
    if (failure == null) {
      log.warn("rdma-reactive-rsocket: " + e.getMessage());
    }
    fail(e);
  }

  /**
   * Closes with {@code e}: frames are dropped from now on and {@link #onClose()} errors at once,
   * so that RSocket cancels its streams even while a responder keeps the connection's event loop
   * busy (RSocket runs responders on the thread that delivered the request); the connection then
   * closes and frees its buffers.
   */
  private void fail(Throwable e) {
    boolean first;
    synchronized (this) {
      first = failure == null;
      if (first) {
        failure = e;
      }
    }
    if (first) {
      log.debug("rdma-reactive-rsocket: closing " + this, e);
      sender.cancel();
      onClose.tryEmitError(e);
    }
    connection.dispose();
  }

  private void closed() {
    sender.cancel(); // releases the frames that will not go out
    if (failure == null) {
      onClose.tryEmitEmpty();
    }
  }

  @Override
  public String toString() {
    return "RdmaDuplexConnection{side=" + side + ", connection=" + connection + "}";
  }
}
