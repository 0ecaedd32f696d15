package io.rdmareactive.rdma.transport;

/**
 * A connection's counters.
 *
 * @param messagesSent messages whose sending completed
 * @param messagesReceived messages delivered (or queued for delivery)
 * @param bytesSent payload bytes posted
 * @param bytesReceived payload bytes received
 * @param creditUpdatesSent credit-only messages sent
 * @param creditUpdatesReceived credit-only messages received
 * @param credits receive buffers of the peer this side may still fill
 * @param maxSendsInFlight most sends (data and credit) that were posted and not yet completed at once
 * @param receiverNotReady RNR_RETRY_EXC_ERR completions seen: 0 unless flow control was broken
 * @param creditViolations flow-control and protocol violations: the peer's (it sent beyond its
 *     credits, granted more than it has buffers, or broke the framing; the connection then fails
 *     with a ProtocolViolationException) or, 0 unless this library has a bug, our own
 * @param creditStalls times the sender had data but no credit and had to wait for the receiver
 * @param completionErrors work completions with an error status, other than the flushes of a disconnect
 * @param registeredBytes memory registered (pinned) for this connection's buffers now: it grows in
 *     chunks with use, up to about {@code 2 × BUFFER_COUNT × BUFFER_SIZE}, and an idle connection holds one
 *     receive chunk; on the loop's shared receive queue only its send buffers (the receive slab is
 *     the loop's: {@link RdmaLoopResources#registeredReceiveBytes()})
 * @param flushGiveUps 1 when this connection's close stopped waiting for the flush completions of
 *     the work it still had posted (after 10 s, polling once more): 0 unless the device or its loop
 *     fell far behind
 * @param dataSends data SENDs whose sending completed: {@code messagesSent / dataSends} is the
 *     messages per SEND, above one where queued messages were coalesced into batches and below
 *     one where messages were fragmented
 * @param doorbells posts of send work requests: each one {@code ibv_post_send} of all that one pass
 *     of the connection's work made (data, credit updates, keepalive probes), so fewer than the
 *     sends when they come in bursts
 * @param signaledSends send work requests that asked for a completion: the last of each post, and
 *     one in 16 within a long one
 * @param completionsPolled work completions polled for this connection, sends and receives:
 *     divided by the messages, what a message costs in completions
 * @param messagesHeld received messages still in this connection's receive buffers, delivered or
 *     waiting for demand, and not yet released: a count that stays up once the application is done
 *     with its messages is a leak (each held message keeps its buffer from the peer)
 * @param bytesCopied bytes this library copied: into send buffers (every message sent but those
 *     sent from registered memory, {@code OutboundMessage.of(region, offset, length)} or
 *     {@code gather(...)}), and out of
 *     receive buffers when it joins a fragmented message's parts or moves undelivered messages
 *     off a closing connection's memory; a message that fits one buffer is delivered in place
 * @param bytesRead bytes this side pulled from its peer's memory with RDMA READ: the rendezvous
 *     messages it received (above {@code RENDEZVOUS_THRESHOLD}, from the peer's registered memory)
 */
public record RdmaStatistics(long messagesSent, long messagesReceived, long bytesSent, long bytesReceived,
    long creditUpdatesSent, long creditUpdatesReceived, long credits, int maxSendsInFlight,
    long receiverNotReady, long creditViolations, long creditStalls, long completionErrors,
    long registeredBytes, long flushGiveUps, long dataSends, long doorbells, long signaledSends,
    long completionsPolled, long messagesHeld, long bytesCopied, long bytesRead) {}
