package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;

/**
 * A connection's outbound side: takes the items of each {@link SendSource} in turn, requests them as
 * credits and send buffers allow, copies them into send buffers (in fragments where needed), posts
 * the SENDs and credit updates, and completes each source once its last send completed. Plain
 * state driven from the connection's drain, the sources coming in through its {@link SendIntake}.
 *
 * <p>Small messages are coalesced ({@link BatchWriter}): those already queued when the drain runs
 * go into as few SENDs as the buffers allow, and the batch is posted as soon as nothing more is
 * queued, so a lone message waits for nothing. Fragmented and empty messages go as before, after
 * the batch in front of them.
 */
final class OutboundSender {
  private final boolean raw;
  private final RegisteredBuffers buffers;
  private final CreditWindow window;
  private final Fragmenter fragmenter;
  private final ConnectionCounters counters;
  private final SendCopier copier;
  private final BatchWriter batch;
  private final SendPoster poster;
  private final RegisteredSends registered;
  private final RendezvousSender rendezvous;
  /** Registered messages longer than this go by rendezvous (0: none do). */
  private final int rendezvousThreshold;
  /** Where sources come in, from any thread; the drain takes them and {@link #enqueue}s them. */
  final SendIntake intake;
  private final ArrayDeque<SendSource> sources = new ArrayDeque<>();
  private final SourceAcks acks;

  OutboundSender(ConnectionOperations connection, SendDoorbell doorbell, TransportConfig config, RegisteredBuffers buffers,
      CreditWindow window, Fragmenter fragmenter, ConnectionCounters counters) {
    this.raw = config.raw();
    this.buffers = buffers;
    this.window = window;
    this.fragmenter = fragmenter;
    this.counters = counters;
    this.poster = new SendPoster(doorbell, config, buffers, window, counters);
    this.intake = new SendIntake(connection, config.bufferCount());
    this.copier = new SendCopier(connection, buffers, counters, config.bufferCount());
    this.batch = new BatchWriter(buffers, copier);
    this.registered = new RegisteredSends();
    this.rendezvous = new RendezvousSender(connection, poster, buffers, config.get(RdmaOption.CLOSE_TIMEOUT));
    this.rendezvousThreshold = raw ? 0 : config.get(RdmaOption.RENDEZVOUS_THRESHOLD);
    this.acks = new SourceAcks(rendezvous::settledThrough);
  }

  /** Queues a source behind those already sending. */
  void enqueue(SendSource s) {
    sources.add(s);
  }

  int sendsOutstanding() {
    return poster.outstanding();
  }

  /**
   * Moves items from the sources into sends while credits and send buffers allow, and posts the
   * batch it filled: never kept open for items still to come.
   */
  void pump() {
    pumpItems();
    postBatch();
  }

  /** The rendezvous of this connection, both ways' bookkeeping of the sending side. */
  RendezvousSender rendezvous() {
    return rendezvous;
  }

  /**
   * Queues a work request that is no data send (a window's bind or invalidate, a READ): it takes a
   * place in the send queue, no buffer and no credit. False, queuing nothing, when the queue is full.
   */
  boolean queueLocal(SendRequest r) {
    return poster.queueLocal(r);
  }

  private void pumpItems() {
    for (;;) {
      if (fragmenter.message() == null && !startNext()) {
        return;
      }
      Object current = fragmenter.message();
      boolean progressed = current instanceof RegisteredMessage r && rendezvousThreshold > 0
          && r.length() > rendezvousThreshold && r.ranges() == 1 ? postRendezvous(r)
          : !raw && batches(current, fragmenter.length()) ? batchMessage() : postChunks();
      if (!progressed) {
        SendSource head = sources.peek();
        if (head != null) {
          requestMore(head);
        }
        return;
      }
    }
  }

  /**
   * Starts the next message of the sources in turn, ending those that are done, failed or
   * cancelled; false when none has one now (demand has gone upstream where it may).
   */
  private boolean startNext() {
    for (;;) {
      SendSource src = sources.peek();
      if (src == null) {
        return false;
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
          postBatch(); // the source's last messages may wait in it
          acks.posted(src, poster.dataPosted());
          continue;
        }
        // What is queued goes before the request: a request may run upstream work (an echo's
        // inbound, say) that a lone message must not wait behind.
        postBatch();
        requestMore(src);
        if (src.queue.isEmpty()) {
          return false;
        }
        continue;
      }
      src.polled++;
      Object sendable;
      try {
        sendable = copier.toSendable(item, fragmenter.chunk());
      } catch (RuntimeException e) {
        sources.poll();
        src.fail(e);
        continue;
      }
      long size = SendCopier.lengthOf(sendable);
      if (!fragmenter.fits(size)) {
        SendCopier.release(sendable);
        sources.poll();
        src.fail(new MessageTooLargeException(size, fragmenter.maxMessage()));
        continue;
      }
      if (size != src.lastSize || sendable instanceof RegisteredMessage) { // a stream's items tend to be of one size: the divisions once per size
        measure(src, sendable, size);
      }
      fragmenter.start(sendable, size);
      return true;
    }
  }

  /** What an item of {@code size} bytes takes: SENDs per item, and items per SEND where it coalesces. */
  private void measure(SendSource src, Object sendable, long size) {
    src.lastSize = size;
    src.sendsPerItem = fragmenter.sendsFor(size);
    src.itemsPerSend = raw || !batches(sendable, size) ? 1
        : Math.max(1, (fragmenter.chunk() - Protocol.BATCH_COUNT) / (size + Protocol.BATCH_LENGTH));
  }

  /** Whether a message coalesces with others: small enough, and not sent from registered memory (which is never copied). */
  private boolean batches(@Nullable Object sendable, long size) {
    return !(sendable instanceof RegisteredMessage) && BatchWriter.batchable(size, fragmenter.chunk());
  }

  private void requestMore(SendSource src) {
    Subscription up = src.upstream;
    if (up == null || src.upstreamDone || src.cancelled) {
      return;
    }
    long capacity = raw ? buffers.freeSends() : Math.min(window.dataCapacity(), buffers.freeSends());
    long want = src.wanted(capacity - fragmenter.sendsLeft());
    if (want > 0) {
      poster.resume();
      src.requested += want;
      up.request(want);
    } else if (!raw && !window.canSendData() && src.requested == src.polled) {
      poster.stall(); // a live publisher gets no demand until the receiver grants credits
    }
  }

  /**
   * Puts the current message, small enough to coalesce, in the open batch, opening one (and
   * posting the full one) where needed; false when out of credits or send buffers.
   */
  private boolean batchMessage() {
    Object m = fragmenter.message();
    int length = (int) fragmenter.length();
    if (batch.isOpen() && !batch.fits(length, fragmenter.chunk())) {
      postBatch();
    }
    if (!batch.isOpen()) {
      if (!poster.canPost()) {
        return false;
      }
      batch.open(buffers.takeSend());
    }
    batch.append(m, length);
    fragmenter.advance(length);
    SendCopier.release(m); // copied
    return true;
  }

  /** Posts the open batch, if any: as a batch, or as a plain SEND when it holds one message. */
  private void postBatch() {
    if (!batch.isOpen()) {
      return;
    }
    int index = batch.index();
    int count = batch.count();
    long bytes = batch.bytes();
    long at = batch.sendOffset();
    int length = batch.sendLength();
    boolean batched = batch.close();
    poster.post(index, at, length, false, batched);
    counters.bytesSent((int) bytes);
    counters.messagesPosted(poster.dataPosted(), count);
  }

  /** Posts fragments of the current message, after the batch before it; false when out of credits or send buffers. */
  private boolean postChunks() {
    postBatch();
    Object m = fragmenter.message();
    RegisteredMessage zeroCopy = m instanceof RegisteredMessage r ? r : null;
    for (;;) {
      if (!poster.canPost()) {
        return false;
      }
      int length = fragmenter.nextLength();
      boolean more = fragmenter.moreAfter(length);
      boolean first = fragmenter.lengthDue(); // its header declares the message's length
      if (zeroCopy != null) {
        postRegistered(zeroCopy, first, length, more);
      } else {
        int index = buffers.takeSend();
        copier.copy(m, fragmenter.offset(), index, 0, length);
        if (first) {
          poster.postFirst(index, length, fragmenter.length());
        } else {
          poster.post(index, 0, length, more, false);
        }
      }
      counters.bytesSent(length);
      if (fragmenter.advance(length)) {
        counters.messagesPosted(poster.dataPosted(), 1);
        if (zeroCopy != null) {
          registered.posted(zeroCopy, poster.dataPosted()); // the device reads it until that send retires
        } else {
          SendCopier.release(m); // copied: a received view's buffer can go back, an OutboundMessage's memory too
        }
        return true;
      }
    }
  }

  /**
   * Sends the current message by rendezvous ({@link RendezvousSender#send}); false when out of
   * credits, buffers or send queue room. A message that cannot be exposed fails its source alone.
   */
  private boolean postRendezvous(RegisteredMessage m) {
    postBatch();
    try {
      if (!rendezvous.send(m)) {
        return false;
      }
    } catch (RendezvousSender.Unexposable ex) { // a post failing is the connection's failure, and goes on up
      fragmenter.abandon();
      m.release();
      SendSource src = sources.poll();
      if (src != null) {
        src.fail(ex.getCause());
      }
      return true;
    }
    counters.bytesSent(m.length());
    fragmenter.advance((int) fragmenter.length());
    counters.messagesPosted(poster.dataPosted(), 1);
    return true;
  }

  /**
   * Posts a fragment of {@code length} bytes of a message from registered memory, gathered from
   * its region with no copy (a first one declares the message's length in its header).
   */
  private void postRegistered(RegisteredMessage m, boolean first, int length, boolean more) {
    registered.gather(poster.request(CompletionDispatcher.ZERO_COPY), m, fragmenter.offset(), length);
    if (first) {
      poster.queueFirst(fragmenter.length());
    } else {
      poster.queueData(more, 0, false);
    }
  }

  /** Sends a credit-only message when the grants owed call for one (framed mode). */
  void sendCredits() {
    if (!raw) {
      rendezvous.dueWork(); // before the update: a DONE carries the grants too
      acknowledge(); // a registration revoked just now released its message
      poster.creditUpdate();
    }
  }

  /** Posts a keepalive probe: a zero-length RDMA WRITE, which needs no credit (see {@link Keepalive}). */
  void postProbe() {
    poster.probe();
  }

  /**
   * A send completed: frees its buffer (unless an inline send gave it back when posted: {@code
   * index} -1) and counts it; the caller then {@link #acknowledge}s.
   */
  void sendCompleted(boolean data, int index, boolean success) {
    poster.completed();
    if (data) {
      if (index >= 0) {
        buffers.freeSend(index);
      }
      long sequence = acks.dataSendCompleted(success);
      registered.retired(sequence);
      if (success) {
        counters.dataCompleted(sequence);
      }
    }
  }

  /** An inline data send was posted: its bytes are in the work request, so its buffer is free now. */
  void inlinePosted(int index) {
    buffers.freeSend(index);
  }

  /** Completes the sources whose sends have all completed, none of them failed. */
  void acknowledge() {
    acks.acknowledge();
  }

  /** Disconnecting: drops the message half sent and fails every source not wholly posted. */
  void abandon(Throwable e) {
    Object abandoned = fragmenter.abandon();
    if (abandoned instanceof RegisteredMessage r) {
      registered.abandoned(r, poster.dataPosted(), acks.dataCompleted());
    } else if (abandoned != null) {
      SendCopier.release(abandoned);
    }
    int open = batch.abandon(); // its messages' sources fail below or were completed by no send
    if (open >= 0) {
      buffers.freeSend(open);
    }
    SendSource.failAll(sources, e);
  }

  /** The queue pair is destroyed: see {@link RegisteredSends#releaseAll}. */
  void releaseRegistered() {
    registered.releaseAll();
  }

  /** Closing: fails the sources whose sends never all completed. */
  void failUnacknowledged(Throwable e) {
    rendezvous.releaseDone();
    acks.failUnacknowledged(e); // completes first those whose sends all succeeded (messages the peer read whole)
  }
}
