package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.QueuePair;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

/**
 * A connection's inbound side: posts receives for its one subscriber's demand, turns what arrives
 * into messages (in place, or reassembled from fragments) and hands them to the subscriber as it
 * requests them. Plain state driven from the connection's drain; the subscriber's request and cancel
 * only record and call the drain.
 *
 * <p>A batch ({@link Protocol#BATCH}) is checked whole ({@link BatchDecoder}) and becomes a view
 * per message over its one buffer, which goes back to the receive queue when the last is
 * released. Demand is counted in messages, the buffers held in buffers.
 *
 * <p>Reassembly is counted in bytes ({@link FragmentReceiver}): a first fragment that finds the
 * budget spent waits in its receive buffer, with whatever arrives after it, and no receive is
 * posted (no credit granted) until bytes come free: the peer is stopped, and no peer makes the
 * server hold more.
 */
final class InboundReceiver {
  private final ConnectionOperations connection;
  private final TransportConfig config;
  private final boolean raw;
  /** Receives come from the loop's shared receive queue: posting is promising grants out of its pool. */
  private final boolean shared;
  /**
   * Shared queue: the most grants beyond the reserve, from 1 (the credit window's rule 3 needs
   * {@code RESERVE + 1} with demand), doubling with each data SEND up to BUFFER_COUNT. Demand
   * alone borrows no more from the loop's slab than the peer has shown it sends: unbounded demand
   * on a quiet connection no longer takes BUFFER_COUNT buffers that its neighbours could use.
   */
  private int lent = 1;
  /** MAX_MESSAGE_SIZE, read once: every message is checked against it. */
  private final int maxMessageSize;
  private final int bufferCount;
  private final int receiveCount;
  private final RegisteredBuffers buffers;
  private final CreditWindow window;
  private final ConnectionCounters counters;
  private final FragmentReceiver fragments;
  private final ReceiveDoorbell receives;
  private final RendezvousReceiver rendezvous;

  // Inputs from any thread.
  private final InboundDemand demand;

  // Drain state.
  /** Receives posted and not yet completed. */
  private int posted;
  /** What waits for the subscriber, and the receive buffers it holds. */
  private final ReadyMessages ready;
  /** Completed receives waiting, in order, behind a first fragment that waits for budget. */
  private final WaitingReceives waiting;
  private boolean terminated;
  private @Nullable Throwable error;

  InboundReceiver(ConnectionOperations connection, QueuePair qp, TransportConfig config, RegisteredBuffers buffers,
      CreditWindow window, ConnectionCounters counters, InboundBudget shared) {
    this.connection = connection;
    this.config = config;
    this.raw = config.raw();
    this.shared = buffers.isShared();
    this.maxMessageSize = config.maxMessageSize();
    this.bufferCount = config.bufferCount();
    this.receiveCount = config.receiveBuffers();
    this.receives = new ReceiveDoorbell(qp, buffers, config.bufferSize(), receiveCount);
    this.buffers = buffers;
    this.window = window;
    this.counters = counters;
    this.demand = new InboundDemand(connection);
    this.fragments = new FragmentReceiver(connection, buffers, counters, shared, config.get(RdmaOption.MAX_INBOUND_BYTES),
        config.inboundMessageLimit());
    this.waiting = new WaitingReceives(receiveCount);
    this.ready = new ReadyMessages(connection, buffers, counters, fragments);
    // Read whole: it waits for the subscriber as a reassembled one does.
    this.rendezvous = new RendezvousReceiver(connection, counters, fragments, config, ready::addHeap);
  }

  /** The receiving half of the rendezvous. */
  RendezvousReceiver rendezvous() {
    return rendezvous;
  }

  /** Whether a close may free the connection now ({@link InboundDemand#closing}). */
  boolean closing() {
    return demand.closing();
  }

  /** The inbound Flux: one subscriber, whose demand posts receives. */
  Flux<RdmaMessage> receive() {
    return demand.receive();
  }

  /** Receives posted that will complete or flush: none on a shared receive queue, which keeps them when the QP goes. */
  int posted() {
    return shared ? 0 : posted;
  }

  /** Takes back the receive buffers of messages released since the last drain. */
  void takeReleases() {
    ready.takeReleases();
  }

  /** A receive completed with an error (a flush, mostly): its buffer goes back unposted. */
  void failed(int index) {
    if (shared && (index = buffers.adopt(index)) < 0) {
      return; // a receive it was not granted: the connection is failing or failed already
    }
    posted--;
    buffers.freeReceive(index);
  }

  /** A receive completed: a message, a fragment of one, or a credit update. */
  void received(int index, int byteLength, boolean hasImmediate, int immediateData) {
    if (shared && (index = buffers.adopt(index)) < 0) {
      // A SEND beyond its grants took a receive of the loop's SRQ: its buffer went back at once.
      connection.protocolError("it sent beyond the credits granted to it (on the loop's shared receive queue)");
      return;
    }
    posted--;
    if (raw) {
      counters.bytesReceived(byteLength);
      deliverChecked(index, byteLength);
      return;
    }
    int imm = immediateData;
    boolean first = hasImmediate && fragments.begins(imm); // its header is a length: no grants, no flags
    if (!first && HeaderRules.unframed(hasImmediate, imm)) {
      refuse(index, "it sent a SEND without a valid rdma-reactive header (reserved bits set, or no immediate data)");
      return;
    }
    String violation = first ? window.arrivedWithoutGrants() : window.arrived(imm);
    if (violation == null) {
      violation = first ? HeaderRules.fragmentViolation(byteLength) : HeaderRules.violation(imm, byteLength);
    }
    if (violation != null) {
      refuse(index, violation);
      return;
    }
    if (!first && (imm & Protocol.CREDIT) != 0) {
      counters.creditUpdateReceived();
      buffers.freeReceive(index);
      return;
    }
    if (!first && (imm & Protocol.DONE) != 0) { // no message: never waits behind those that wait for demand
      rendezvous.take(buffers.receiveMemory(index), buffers.receiveOffset(index), byteLength, imm);
      buffers.freeReceive(index);
      return;
    }
    if (shared && lent < bufferCount) {
      lent = Math.min(bufferCount, 2 * lent);
    }
    if (!waiting.isEmpty() || !take(index, byteLength, imm)) {
      waiting.add(index, byteLength, imm);
    }
  }

  /** The SEND in receive buffer {@code index} broke the protocol ({@code violation}): the buffer goes back, the connection fails. */
  private void refuse(int index, String violation) {
    buffers.freeReceive(index);
    connection.protocolError(violation);
  }

  /** Takes the receives that waited for budget, in order, as far as it allows now. */
  private void takeWaiting() {
    while (!waiting.isEmpty()) {
      if (!take(waiting.index(), waiting.length(), waiting.header())) {
        return;
      }
      waiting.remove();
    }
  }

  /**
   * A message, a batch, or a fragment of a message, in receive buffer {@code index}; false,
   * taking nothing, when it begins a fragmented message that the budget cannot hold yet.
   */
  private boolean take(int index, int length, int imm) {
    if (fragments.startsMessage(imm)) { // its header is the message's length, no flags
      return rendezvous.waiting() == 0 && takeFragment(index, length, imm);
    }
    if ((imm & Protocol.RNDV) == 0 && rendezvous.waiting() > 0) {
      return false; // behind a rendezvous message still to be read: messages arrive in order
    }
    if ((imm & (Protocol.RNDV | Protocol.DONE)) != 0) {
      if (fragments.isFragment(imm)) {
        return fragments.broken(index, "it sent a rendezvous flag on a fragment");
      }
      rendezvous.take(buffers.receiveMemory(index), buffers.receiveOffset(index), length, imm);
      buffers.freeReceive(index);
      return true;
    }
    if ((imm & Protocol.BATCH) != 0) {
      if (fragments.isFragment(imm)) { // MORE, or in the middle of a fragmented message
        return fragments.broken(index, "it sent a batch flag on a fragment");
      }
      takeBatch(index, length);
      return true;
    }
    if (!fragments.isFragment(imm)) {
      counters.bytesReceived(length);
      deliverChecked(index, length);
      return true;
    }
    return takeFragment(index, length, imm);
  }

  /** A fragment: joined to its message, delivered when it is the last; false when a first one waits for budget. */
  private boolean takeFragment(int index, int length, int imm) {
    if (!fragments.take(index, length, imm)) {
      return false;
    }
    byte[] whole = fragments.takeCompleted();
    if (whole != null) {
      ready.addHeap(new HeapMessage(whole)); // its reservation goes when the subscriber takes it
      counters.messageReceived();
    }
    return true;
  }

  /**
   * A batch in receive buffer {@code index}: checked whole before anything is delivered, then a
   * view per message, each holding a count on the buffer.
   */
  private void takeBatch(int index, int length) {
    MemorySegment memory = buffers.receiveMemory(index);
    long offset = buffers.receiveOffset(index);
    String violation = BatchDecoder.check(memory, offset, length, maxMessageSize);
    if (violation != null) {
      buffers.freeReceive(index);
      connection.protocolError(violation);
      return;
    }
    ready.deliverBatch(index, memory, offset);
  }

  /** A whole message in one SEND: delivered, unless it is larger than this side accepts. */
  private void deliverChecked(int index, int length) {
    if (length > maxMessageSize) { // possible where MAX_MESSAGE_SIZE is below BUFFER_SIZE
      buffers.freeReceive(index);
      connection.protocolError("it sent a message of " + length + " bytes, above the maximum of "
          + maxMessageSize + " bytes");
      return;
    }
    ready.deliver(index, length);
  }

  /**
   * Hands ready messages to the subscriber as far as it requested; once {@code closed} and all are
   * out, terminates it.
   */
  void emit(boolean closed) {
    CoreSubscriber<? super RdmaMessage> a = demand.subscriber;
    if (demand.cancelled) {
      demand.subscriber = null; // rule 3.13: drop a cancelled subscriber (subscribe's drain comes after it set it)
      if (!closed) {
        takeWaiting(); // and dropped below: a cancelled subscriber's peer still gets its credits
      }
      ready.dropAll();
      return;
    }
    if (!closed) {
      takeWaiting();
    }
    if (a == null || terminated) {
      return;
    }
    long r = demand.requested.get();
    long e = 0;
    while (e != r && !ready.isEmpty() && !demand.cancelled) {
      a.onNext(ready.next());
      e++;
    }
    if (e != 0 && r != Long.MAX_VALUE) {
      demand.requested.addAndGet(-e);
    }
    if (closed && ready.isEmpty() && !demand.cancelled) {
      terminated = true;
      demand.subscriber = null; // and a terminated one
      Throwable t = error;
      if (t != null) {
        a.onError(t);
      } else {
        a.onComplete();
      }
    }
  }

  /** Posts receives up to the subscriber's demand (framed) or all of them (raw). */
  void postReceives() {
    if (!raw) {
      rendezvous.pump(demand.cancelled, demand.subscriber != null && demand.requested.get() > ready.size());
    }
    if (!waiting.isEmpty()) {
      return; // a message waits for budget: the peer gets no credit until it fits
    }
    int target = raw ? receiveCount : framedTarget();
    while (posted < target && buffers.freeReceives() > 0) {
      int taken = shared ? buffers.promise(target - posted) : receives.post(target - posted); // one ibv_post_recv for the lot
      posted += taken;
      for (int i = 0; !raw && i < taken; i++) {
        window.receivePosted();
      }
      receives.throwIfFailed();
      if (taken == 0) {
        break; // the loop's pool lends no more now; a buffer given back drains again
      }
    }
  }

  /** How many receives framed mode keeps posted now: the reserve, plus what demand calls for and the budget allows. */
  private int framedTarget() {
    long wanted = demand.cancelled ? Long.MAX_VALUE : demand.subscriber == null ? 0 : demand.requested.get();
    // A DONE the peer owes takes a credit: two receives per message awaiting one, as demand
    // would post, so that its grants reach the update threshold (CreditWindow, rule 2).
    long forDones = 2L * connection.sender().rendezvous().awaitingDone();
    wanted = wanted > Long.MAX_VALUE - forDones ? Long.MAX_VALUE : wanted + forDones;
    long uncovered = Math.max(0, wanted - ready.size());
    int room = Math.max(0, (shared ? Math.min(bufferCount, lent) : bufferCount) - ready.held());
    // The reserve is reposted whatever the demand, and each repost is granted: a peer that
    // spends its last credit too gets it back at once. Messages waiting in place stop that when
    // they hold every buffer; reassembled ones hold none, so they count as if they did, or a
    // peer sending fragments to a subscriber without demand would fill the heap, a message per
    // grant. So at most receiveCount messages ever wait, however they came.
    return Math.min(Protocol.RESERVE + (int) Math.min(uncovered, room),
        receiveCount - ready.held() - ready.heap() - rendezvous.waiting());
  }

  /** Posts one receive of the reserve (on a shared queue, promises it: always backed by the pool). */
  void postReceive() {
    posted += shared ? buffers.promise(1) : receives.post(1);
    receives.throwIfFailed();
  }

  /** The connection failed: the subscriber gets {@code e} once the messages before it are out. */
  void fail(Throwable e) {
    error = e;
  }

  /**
   * Closing: what waits for the subscriber moves off the registered memory, which goes now. A
   * message still in reassembly is lost; where the peer ended the connection in the middle of it
   * ({@code peerLeft}, no failure before), the subscriber gets a RESET saying so, not a clean end
   * that would pass for a whole stream.
   */
  void rescue(boolean peerLeft) {
    long partial = fragments.inProgress();
    if (peerLeft && partial >= 0 && error == null) {
      error = ConnectionOperations.reset("the peer disconnected in the middle of a message (" + partial
          + " bytes of it had arrived); the message is lost", null);
    }
    ready.rescue();
    fragments.returnBudget();
    waiting.clear(buffers::freeReceive);
  }
}
