package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * A connection's outbound side: takes the items of each {@link SendSource} in turn, requests them as
 * credits and send buffers allow, copies them into send buffers (in fragments where needed), posts
 * the SENDs and credit updates, and completes each source once its last send completed. Plain
 * state driven from the connection's drain; only {@link #submit} may be called from any thread.
 */
final class OutboundSender {
  private static final ValueLayout.OfInt TOTAL = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN);
  private final ConnectionOperations connection;
  private final SendDoorbell doorbell;
  private final TransportConfig config;
  private final boolean raw;
  private final int sendDepth;
  private final int sendCount;
  private final RegisteredBuffers buffers;
  private final CreditWindow window;
  private final Fragmenter fragmenter;
  private final ConnectionCounters counters;
  private final SendRequest sendRequest = new SendRequest();
  private final Queue<SendSource> newSources = new ConcurrentLinkedQueue<>();
  private final ArrayDeque<SendSource> sources = new ArrayDeque<>();
  private final ArrayDeque<SendSource> awaitingAck = new ArrayDeque<>();
  private int sendsOutstanding;
  private long dataPosted;
  private long dataCompleted;
  /** Sequence number of the first data send that failed; sends before it were delivered. */
  private long firstFailedData = Long.MAX_VALUE;
  /** Whether the sender is waiting for credits now; a stall is counted once, when it starts. */
  private boolean creditStalled;
  /** Per send buffer, its memory alone (see {@link #ownBuffer}); null until an OutboundMessage is sent. */
  private MemorySegment @Nullable [] ownBuffers;

  OutboundSender(ConnectionOperations connection, SendDoorbell doorbell, TransportConfig config, RegisteredBuffers buffers,
      CreditWindow window, Fragmenter fragmenter, ConnectionCounters counters) {
    this.connection = connection;
    this.doorbell = doorbell;
    this.config = config;
    this.raw = config.raw();
    this.sendDepth = config.sendQueueDepth();
    this.sendCount = config.bufferCount();
    this.buffers = buffers;
    this.window = window;
    this.fragmenter = fragmenter;
    this.counters = counters;
  }

  /** One {@code send(messages)}: a source per subscription, handed to the drain. */
  Mono<Void> send(Publisher<?> messages) {
    return new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super Void> actual) {
        SendSource s = new SendSource(connection, messages, actual, null, sendCount);
        actual.onSubscribe(s);
        newSources.add(s);
        connection.drain();
      }
    };
  }

  /** Any thread: the handshake is done; a marker, so that the start is ordered with the sends. */
  void submitStart(Protocol.@Nullable Hello peer) {
    newSources.add(new SendSource(connection, null, null, peer, sendCount));
  }

  /**
   * The next source handed over by {@link #send} or {@link #submitStart}, or null. A source
   * {@linkplain #handBack handed back} is cleared here instead: its queue is the drain's.
   */
  @Nullable SendSource pollNew() {
    SendSource s;
    while ((s = newSources.poll()) != null) {
      if (!s.terminated.get()) {
        return s;
      }
      s.clear();
    }
    return null;
  }

  /**
   * Any thread: {@code s}, which the drain let go of, queued an item after all; the drain
   * releases it (see {@link SendSource}). The caller then calls the drain.
   */
  void handBack(SendSource s) {
    newSources.add(s);
  }

  /** Queues a source behind those already sending. */
  void enqueue(SendSource s) {
    sources.add(s);
  }

  int sendsOutstanding() {
    return sendsOutstanding;
  }

  /** Moves items from the sources into sends while credits and send buffers allow. */
  void pump() {
    for (;;) {
      if (fragmenter.message() == null) {
        SendSource src = sources.peek();
        if (src == null) {
          return;
        }
        if (src.cancelled) {
          sources.poll();
          src.terminate();
          continue;
        }
        if (!src.subscribed) {
          src.subscribed = true;
          src.publisher.subscribe(src);
        }
        Throwable error = src.upstreamError;
        if (error != null) {
          sources.poll();
          src.fail(error);
          continue;
        }
        Object item = src.queue.poll();
        if (item == null) {
          if (src.upstreamDone) {
            sources.poll();
            src.lastSequence = dataPosted;
            awaitingAck.add(src);
            if (dataCompleted >= dataPosted) {
              awaitingAck.remove(src);
              src.complete();
            }
            continue;
          }
          requestMore(src);
          if (src.queue.isEmpty()) {
            return;
          }
          continue;
        }
        src.polled++;
        Object sendable;
        try {
          sendable = toSendable(item);
        } catch (RuntimeException e) {
          sources.poll();
          src.fail(e);
          continue;
        }
        long size = lengthOf(sendable);
        if (!fragmenter.fits(size)) {
          releaseSendable(sendable);
          sources.poll();
          src.fail(new MessageTooLargeException(size, fragmenter.maxMessage()));
          continue;
        }
        src.sendsPerItem = fragmenter.sendsFor(size);
        fragmenter.start(sendable, size);
      }
      if (!postChunks()) {
        SendSource head = sources.peek();
        if (head != null) {
          requestMore(head);
        }
        return;
      }
    }
  }

  private void requestMore(SendSource src) {
    Subscription up = src.upstream;
    if (up == null || src.upstreamDone || src.cancelled) {
      return;
    }
    long capacity = raw ? buffers.freeSends() : Math.min(window.dataCapacity(), buffers.freeSends());
    // Counted in SENDs, not items: an item of n fragments takes n credits. Items are asked for as
    // many as the last one's size says the credits cover (one until one was seen, at least one
    // when the sends allow any), so what waits here is about the credits' worth of bytes, not
    // the credits times MAX_MESSAGE_SIZE that a peer granting and then withholding could pile up.
    long sends = capacity - fragmenter.sendsLeft();
    long items = sends <= 0 ? 0 : src.polled == 0 ? 1 : Math.max(1, sends / src.sendsPerItem);
    long want = items - (src.requested - src.polled);
    if (want > 0) {
      creditStalled = false;
      src.requested += want;
      up.request(want);
    } else if (!raw && !window.canSendData() && src.requested == src.polled && !creditStalled) {
      creditStalled = true; // a live publisher gets no demand until the receiver grants credits
      counters.creditStall();
    }
  }

  /** Posts fragments of the current message; false when out of credits or send buffers. */
  private boolean postChunks() {
    Object m = fragmenter.message();
    for (;;) {
      if (!raw && !window.canSendData()) {
        if (!creditStalled) {
          creditStalled = true;
          counters.creditStall();
        }
        return false;
      }
      if (sendsOutstanding >= sendDepth || buffers.freeSends() == 0) {
        return false;
      }
      creditStalled = false;
      int length = fragmenter.nextLength();
      boolean more = fragmenter.moreAfter(length);
      long from = fragmenter.offset();
      int index = buffers.takeSend();
      long offset = buffers.offset(index);
      MemorySegment to = buffers.sendMemory(index);
      int declared = fragmenter.lengthDue() ? Protocol.TOTAL_LENGTH : 0;
      offset += declared; // a first fragment's data follows its message's declared length
      switch (m) {
        case byte[] b -> MemorySegment.copy(b, (int) from, to, ValueLayout.JAVA_BYTE, offset, length);
        case ReceivedView v -> MemorySegment.copy(buffers.receiveMemory(v.index), buffers.offset(v.index) + from,
            to, offset, length);
        case OutboundMessage o -> o.copyTo(from, ownBuffer(index, to), offset - buffers.offset(index), length);
        default -> MemorySegment.copy((MemorySegment) m, from, to, offset, length);
      }
      if (declared != 0) { // after the copy: an OutboundMessage that writes all of its buffer cannot clobber it
        to.set(TOTAL, offset - declared, (int) fragmenter.length());
      }
      sendRequest.reset(CompletionDispatcher.DATA | index, raw ? SendRequest.Opcode.SEND : SendRequest.Opcode.SEND_WITH_IMM)
          .gather(buffers.sendRegion(index), offset - declared, length + declared);
      int inline = config.inlineThreshold();
      sendRequest.flags(SendRequest.SIGNALED | (inline > 0 && length + declared <= inline ? SendRequest.INLINE : 0));
      if (!raw) {
        sendRequest.immediate(window.header(more, false));
      }
      doorbell.queue(sendRequest);
      if (!raw) {
        if (!window.sent()) {
          counters.creditViolation();
        }
      }
      sent();
      dataPosted++;
      counters.bytesSent(length); // message bytes: a first fragment's declared length is framing
      if (fragmenter.advance(length)) {
        counters.messagePosted(dataPosted);
        releaseSendable(m); // copied: a received view's buffer can go back, an OutboundMessage's memory too
        return true;
      }
    }
  }

  /**
   * Send buffer {@code index} alone, as an {@link OutboundMessage} gets it to copy into: user code
   * that writes outside its range then meets the segment's bounds, not the buffers of other sends
   * in flight beside it in the chunk. One slice per buffer, made on its first use, so a copy
   * allocates nothing; the slice is the whole buffer, since a first fragment's data starts after
   * its declared length and any other's at the buffer's start.
   */
  private MemorySegment ownBuffer(int index, MemorySegment chunk) {
    MemorySegment[] own = ownBuffers;
    if (own == null) {
      own = ownBuffers = new MemorySegment[sendCount];
    }
    MemorySegment b = own[index];
    if (b == null) {
      b = own[index] = chunk.asSlice(buffers.offset(index), buffers.bufferSize);
    }
    return b;
  }

  private void sent() {
    sendsOutstanding++;
    counters.sendsInFlight(sendsOutstanding);
  }

  /** Sends a credit-only message when the grants owed call for one (framed mode). */
  void sendCredits() {
    if (raw || sendsOutstanding >= sendDepth || !window.creditUpdateDue()) {
      return;
    }
    sendRequest.reset(CompletionDispatcher.CREDIT, SendRequest.Opcode.SEND_WITH_IMM).immediate(window.header(false, true));
    doorbell.queue(sendRequest);
    window.sent(); // creditUpdateDue() saw a credit
    counters.creditUpdateSent();
    sent();
  }

  /** Posts a keepalive probe: a zero-length RDMA WRITE, which needs no credit (see {@link Keepalive}). */
  void postProbe() {
    // Zero bytes: no remote address or key is checked (IBTA C9-88), so none is needed.
    sendRequest.reset(CompletionDispatcher.KEEPALIVE, SendRequest.Opcode.RDMA_WRITE).remote(0, 0).flags(SendRequest.SIGNALED);
    doorbell.queue(sendRequest);
    sent();
  }

  /**
   * What the item's bytes are copied from, wrapping nothing where that is possible (a wrapper per
   * message would be an allocation per message): a byte[] and a message this connection received
   * into one of its buffers are copied from directly (echo), the latter released once copied.
   */
  private Object toSendable(Object item) {
    if (item instanceof byte[] || item instanceof MemorySegment || item instanceof OutboundMessage) {
      return item;
    }
    if (item instanceof ReceivedView rv && rv.belongsTo(connection) && rv.length() <= fragmenter.chunk()) {
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
  private static void releaseSendable(Object sendable) {
    if (sendable instanceof ReceivedView v) {
      v.release();
      v.unref(); // the sender's count, taken in toSendable
    } else if (sendable instanceof OutboundMessage o) {
      o.release();
    }
  }

  private static long lengthOf(Object sendable) {
    return switch (sendable) {
      case byte[] b -> b.length;
      case ReceivedView v -> v.length();
      case OutboundMessage o -> o.length();
      default -> ((MemorySegment) sendable).byteSize();
    };
  }

  private MemorySegment toSegment(Object item) {
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

  /**
   * A send completed: frees its buffer (unless an inline send gave it back when posted: {@code
   * index} -1) and counts it; the caller then {@link #acknowledge}s.
   */
  void sendCompleted(boolean data, int index, boolean success) {
    sendsOutstanding--;
    if (data) {
      if (index >= 0) {
        buffers.freeSend(index);
      }
      dataCompleted++;
      if (!success && firstFailedData == Long.MAX_VALUE) {
        firstFailedData = dataCompleted;
      }
      if (success) {
        counters.dataCompleted(dataCompleted);
      }
    }
  }

  /** An inline data send was posted: its bytes are in the work request, so its buffer is free now. */
  void inlinePosted(int index) {
    buffers.freeSend(index);
  }

  /** Completes the sources whose sends have all completed, none of them failed. */
  void acknowledge() {
    SendSource head;
    while ((head = awaitingAck.peek()) != null && head.lastSequence <= dataCompleted
        && head.lastSequence < firstFailedData) {
      awaitingAck.poll();
      head.complete();
    }
  }

  /** Disconnecting: drops the message half sent and fails every source not wholly posted. */
  void abandon(Throwable e) {
    Object abandoned = fragmenter.abandon();
    if (abandoned != null) {
      releaseSendable(abandoned);
    }
    SendSource s;
    while ((s = sources.poll()) != null) {
      s.fail(e);
    }
  }

  /** Closing: fails the sources whose sends never all completed. */
  void failUnacknowledged(Throwable e) {
    SendSource unacknowledged;
    while ((unacknowledged = awaitingAck.poll()) != null) {
      unacknowledged.fail(e);
    }
  }
}
