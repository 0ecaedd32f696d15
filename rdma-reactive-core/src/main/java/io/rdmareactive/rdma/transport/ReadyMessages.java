package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * The messages that wait, in order, for a connection's subscriber, and the receive buffers they
 * hold: a view in place holds its buffer until released; a message reassembled on the heap (or
 * read by rendezvous) holds none, and its byte reservation until the subscriber takes it. Plain
 * state driven from the connection's drain, as {@link InboundReceiver}'s.
 */
final class ReadyMessages {
  private final ConnectionOperations connection;
  private final RegisteredBuffers buffers;
  private final ConnectionCounters counters;
  private final FragmentReceiver fragments;
  private final BatchDecoder batch = new BatchDecoder();
  private final ArrayDeque<RdmaMessage> ready = new ArrayDeque<>();
  /** Receive buffers holding messages: in {@code ready}, or delivered and not yet released. */
  private int held;
  /** Messages in {@code ready} reassembled on the heap: they hold no receive buffer, so they count as if they did. */
  private int heap;

  ReadyMessages(ConnectionOperations connection, RegisteredBuffers buffers, ConnectionCounters counters,
      FragmentReceiver fragments) {
    this.connection = connection;
    this.buffers = buffers;
    this.counters = counters;
    this.fragments = fragments;
  }

  /** Messages waiting for the subscriber. */
  int size() {
    return ready.size();
  }

  /** Whether none waits. */
  boolean isEmpty() {
    return ready.isEmpty();
  }

  /** Receive buffers the messages hold, waiting or delivered. */
  int held() {
    return held;
  }

  /** Waiting messages off the receive buffers, which the receives posted count as if they held one. */
  int heap() {
    return heap;
  }

  /** Takes back the receive buffers of messages released since the last drain. */
  void takeReleases() {
    held -= buffers.reclaimReleased();
  }

  /** A whole message in receive buffer {@code index}, checked: a view over it. */
  void deliver(int index, int length) {
    ready.add(new ReceivedView(connection, buffers, index, 0, length));
    held++;
    counters.messageReceived();
  }

  /**
   * A batch in receive buffer {@code index} at {@code offset}, checked whole: a view per message,
   * each holding a count on the one buffer.
   */
  void deliverBatch(int index, MemorySegment memory, long offset) {
    held++;
    batch.start(memory, offset);
    while (batch.next()) {
      int n = batch.messageLength();
      ready.add(new ReceivedView(connection, buffers, index, (int) (batch.messageStart() - offset), n));
      counters.bytesReceived(n);
      counters.messageReceived();
    }
  }

  /** A message off the receive buffers: reassembled, or read whole by rendezvous. */
  void addHeap(RdmaMessage m) {
    ready.add(m);
    heap++;
  }

  /** The oldest message, for the subscriber: one off the receive buffers gives back its reservation. */
  RdmaMessage next() {
    RdmaMessage m = ready.poll();
    if (!(m instanceof ReceivedView)) {
      heap--;
      fragments.unreserve(m.length());
    }
    return m;
  }

  /** The subscriber cancelled: every waiting message is let go, and its buffer or reservation with it. */
  void dropAll() {
    RdmaMessage m;
    while ((m = ready.poll()) != null) {
      if (m instanceof ReceivedView rv) {
        connection.counters().messageLetGo();
        if (buffers.dropUndelivered(rv.index)) {
          held--;
        }
      } else {
        fragments.unreserve(m.length());
        m.release(); // a rendezvous message's pooled memory goes back; a heap one's is garbage anyway
      }
    }
    heap = 0;
  }

  /** Closing: every waiting message moves to the heap, off the registered memory, which goes now. */
  void rescue() {
    int n = ready.size();
    for (int i = 0; i < n; i++) {
      RdmaMessage m = ready.poll();
      if (m instanceof ReceivedView rv) {
        // Undelivered: the connection's own count, so it may copy and drop it; delivered views
        // keep theirs, and the memory with them (RegisteredBuffers#freeWhenUnused).
        m = new HeapMessage(rv.toByteArray());
        counters.bytesCopied(rv.length());
        connection.counters().messageLetGo();
        if (buffers.dropUndelivered(rv.index)) {
          held--;
        }
      } else if (m instanceof ReadView rv) {
        // Its target's registration goes with the rest; its memory would wait for a subscriber that may never come.
        m = new HeapMessage(rv.toByteArray());
        counters.bytesCopied(rv.length());
        rv.release();
      }
      ready.add(m);
    }
    heap = n;
  }
}
