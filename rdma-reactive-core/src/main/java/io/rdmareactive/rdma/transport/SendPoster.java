package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.SendRequest;

/**
 * Puts a connection's work requests in its send queue (through the {@link SendDoorbell}) and
 * counts them: data SENDs with their header (credits, flags), credit updates, keepalive probes and
 * the rendezvous' local work requests, each only while the send queue, a credit and a send buffer
 * allow. {@link OutboundSender} decides what to send; this class is how it goes out.
 */
final class SendPoster {
  private final SendDoorbell doorbell;
  private final boolean raw;
  /** A data send's opcode: SEND raw, SEND with the header as immediate data framed. */
  private final SendRequest.Opcode dataOpcode;
  private final int sendDepth;
  /** INLINE_THRESHOLD, read once: every data send is checked against it. */
  private final int inlineThreshold;
  private final RegisteredBuffers buffers;
  private final CreditWindow window;
  private final ConnectionCounters counters;
  /** As many gather entries as the QP has: a message from registered memory gathers its ranges. */
  private final SendRequest sendRequest = new SendRequest(EndpointOptions.SEND_SCATTER_GATHER);
  private int sendsOutstanding;
  private long dataPosted;
  /** Whether the sender is waiting for credits now; a stall is counted once, when it starts. */
  private boolean creditStalled;

  SendPoster(SendDoorbell doorbell, TransportConfig config, RegisteredBuffers buffers, CreditWindow window,
      ConnectionCounters counters) {
    this.doorbell = doorbell;
    this.raw = config.raw();
    this.dataOpcode = raw ? SendRequest.Opcode.SEND : SendRequest.Opcode.SEND_WITH_IMM;
    this.sendDepth = config.sendQueueDepth();
    this.inlineThreshold = config.inlineThreshold();
    this.buffers = buffers;
    this.window = window;
    this.counters = counters;
  }

  /** Work requests posted and not yet completed. */
  int outstanding() {
    return sendsOutstanding;
  }

  /** The sequence number of the last data send posted (the first is 1). */
  long dataPosted() {
    return dataPosted;
  }

  /** A send completed: its place in the send queue is free. */
  void completed() {
    sendsOutstanding--;
  }

  /** Counts a credit stall, once, when it starts. */
  void stall() {
    if (!creditStalled) {
      creditStalled = true;
      counters.creditStall();
    }
  }

  /** Demand went upstream: a stall that comes after is a new one. */
  void resume() {
    creditStalled = false;
  }

  /** Whether a data send may be posted now: a credit, a send buffer and room in the send queue. */
  boolean canPost() {
    if (!raw && !window.canSendData()) {
      stall();
      return false;
    }
    if (sendsOutstanding >= sendDepth || buffers.freeSends() == 0) {
      return false;
    }
    creditStalled = false;
    return true;
  }

  /** See {@link OutboundSender#queueLocal}. */
  boolean queueLocal(SendRequest r) {
    if (sendsOutstanding >= sendDepth) {
      return false;
    }
    doorbell.queue(r);
    sent();
    return true;
  }

  /**
   * A send buffer for a rendezvous SEND (a descriptor, a DONE) when a credit allows one and the send
   * queue has {@code places} (the SEND and what goes with it); else -1.
   */
  int controlBuffer(int places) {
    return sendsOutstanding + places <= sendDepth && canPost() ? buffers.takeSend() : -1;
  }

  /** Posts {@code length} bytes of send buffer {@code index} as a data SEND with header {@code kind}; returns its sequence number. */
  long postControl(int index, int length, int kind) {
    queueInPlace(index, 0, length, header(false, kind), false);
    dataQueued(true);
    return dataPosted;
  }

  /** The data send to fill in for {@link #queueData}, with work request id {@code id}. */
  SendRequest request(long id) {
    return sendRequest.reset(id, dataOpcode);
  }

  /** Posts a data SEND of {@code length} bytes at {@code at} in send buffer {@code index}. */
  void post(int index, long at, int length, boolean more, boolean batched) {
    queueInPlace(index, at, length, header(more, batched ? Protocol.BATCH : 0), inlineThreshold > 0 && length <= inlineThreshold);
    dataQueued(true);
  }

  /**
   * Posts the first fragment of a message of {@code total} bytes, {@code length} bytes of send
   * buffer {@code index}: its header declares the length, and the grants wait for the next SEND.
   */
  void postFirst(int index, int length, long total) {
    queueInPlace(index, 0, length, Protocol.firstFragment(total), false);
    dataQueued(false);
  }

  /** {@link #queueData(boolean, int, boolean)} for {@code length} bytes at {@code at} in send buffer {@code index}, filled in place. */
  private void queueInPlace(int index, long at, int length, int header, boolean inline) {
    doorbell.queueSend(CompletionDispatcher.DATA | index, dataOpcode, buffers.sendRegion(index),
        buffers.sendOffset(index) + at, length, dataFlags(inline), header);
  }

  /** Queues the data send filled in by {@link #request}, with the header its flags call for ({@code kind}: BATCH, RNDV, DONE or 0). */
  void queueData(boolean more, int kind, boolean inline) {
    sendRequest.flags(dataFlags(inline));
    if (!raw) {
      sendRequest.immediate(header(more, kind));
    }
    doorbell.queue(sendRequest);
    dataQueued(true);
  }

  /** Queues the data send filled in by {@link #request} as the first fragment of a message of {@code total} bytes (see {@link #postFirst}). */
  void queueFirst(long total) {
    sendRequest.flags(dataFlags(false)).immediate(Protocol.firstFragment(total));
    doorbell.queue(sendRequest);
    dataQueued(false);
  }

  /** A data SEND's header: every pending grant, MORE, and {@code kind}; none raw. */
  private int header(boolean more, int kind) {
    return raw ? 0 : window.header(more, false) | kind;
  }

  /** A data send's flags: each asks for a completion (the doorbell decides which keep it), inline as told. */
  private static int dataFlags(boolean inline) {
    return SendRequest.SIGNALED | (inline ? SendRequest.INLINE : 0);
  }

  /** A data SEND was queued; {@code granting}: its header announced the pending grants (a first fragment's does not). */
  private void dataQueued(boolean granting) {
    if (!raw && !(granting ? window.sent() : window.sentWithoutGrants())) {
      counters.creditViolation();
    }
    sent();
    dataPosted++;
  }

  /** Posts a credit-only message when the grants owed call for one and the send queue has room (framed mode). */
  void creditUpdate() {
    if (sendsOutstanding >= sendDepth || !window.creditUpdateDue()) {
      return;
    }
    sendRequest.reset(CompletionDispatcher.CREDIT, SendRequest.Opcode.SEND_WITH_IMM).immediate(window.header(false, true));
    doorbell.queue(sendRequest);
    window.sent(); // creditUpdateDue() saw a credit
    counters.creditUpdateSent();
    sent();
  }

  /** Posts a keepalive probe: a zero-length RDMA WRITE, which needs no credit (see {@link Keepalive}). */
  void probe() {
    // Zero bytes: no remote address or key is checked (IBTA C9-88), so none is needed.
    sendRequest.reset(CompletionDispatcher.KEEPALIVE, SendRequest.Opcode.RDMA_WRITE).remote(0, 0).flags(SendRequest.SIGNALED);
    doorbell.queue(sendRequest);
    sent();
  }

  private void sent() {
    sendsOutstanding++;
    counters.sendsInFlight(sendsOutstanding);
  }
}
