package io.rdmareactive.rdma.conformance;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Two RC QPs of one context connected to each other, one CQ (optionally on a channel) for both,
 * and one registered buffer: enough to make completions on demand. Closes children first.
 */
public final class Loopback implements AutoCloseable {
  public static final int BUFFER = 64 * 1024;

  public final RdmaContext context;
  public final ProtectionDomain pd;
  public final @Nullable CompletionChannel channel;
  public final CompletionQueue cq;
  public final Arena arena = Arena.ofShared();
  public final MemorySegment memory;
  public final MemoryRegion mr;
  public final QueuePair a;
  public final QueuePair b;
  private final SendRequest send = new SendRequest();
  private final ReceiveRequest receive = new ReceiveRequest();

  /** A loopback whose QPs have {@code qpDepth} work requests each way, on a CQ of 4 x qpDepth. */
  public Loopback(RdmaContext context, int gidIndex, int qpDepth, boolean withChannel) {
    this(context, gidIndex, qpDepth, withChannel, QueuePairConnectOptions.defaults().withGidIndex(gidIndex));
  }

  public Loopback(RdmaContext context, int gidIndex, int qpDepth, boolean withChannel,
      QueuePairConnectOptions connect) {
    this.context = context;
    pd = context.allocateProtectionDomain();
    channel = withChannel ? context.createCompletionChannel() : null;
    cq = context.createCompletionQueue(4 * qpDepth, channel);
    memory = arena.allocate(BUFFER, 64);
    mr = pd.registerMemory(memory, Access.remote());
    a = pd.createQueuePair(QueuePairOptions.reliable(cq, qpDepth));
    b = pd.createQueuePair(QueuePairOptions.reliable(cq, qpDepth));
    a.connect(b.localAddress(connect), connect);
    b.connect(a.localAddress(connect), connect);
  }

  /** Posts a signaled 8-byte RDMA write from a to b: one completion on the CQ. */
  public void write(long wrId) {
    a.postSend(send.write(wrId, mr, 0, 8, mr.address() + 8, mr.remoteKey()));
  }

  /** Posts {@code count} writes with ids from {@code first}, waiting for room when the send queue is full. */
  public void writes(long first, int count) {
    for (long id = first; id < first + count; id++) {
      for (;;) {
        try {
          write(id);
          break;
        } catch (NativeCallException e) {
          if (e.errno() != NativeCallException.ENOMEM) {
            throw e;
          }
          LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50)); // the subscriber has not polled yet
        }
      }
    }
  }

  /** Posts a receive on b of {@code length} bytes at {@code offset}. */
  public void receiveOnB(long wrId, long offset, int length) {
    b.postReceive(receive.set(wrId, mr, offset, length));
  }

  /** Polls until {@code count} completions came (or 10 s passed). */
  public List<WorkCompletion> pollAtLeast(int count) {
    return new Poller(cq).pollAtLeast(count);
  }

  /** Polls any CQ until enough completions came. */
  public record Poller(CompletionQueue cq) {
    public List<WorkCompletion> pollAtLeast(int count) {
      List<WorkCompletion> out = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (out.size() < count && System.nanoTime() < deadline) {
      if (cq.poll(count - out.size(), wc -> out.add(wc.toWorkCompletion())) == 0) {
        LockSupport.parkNanos(100_000);
      }
    }
    return out;
    }
  }

  /** Polls what is there now, waiting {@code settleMillis} first for in-flight work (native). */
  public List<WorkCompletion> pollAvailable(long settleMillis) {
    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(settleMillis));
    List<WorkCompletion> out = new ArrayList<>();
    while (cq.poll(64, wc -> out.add(wc.toWorkCompletion())) > 0) {
      // drain
    }
    return out;
  }

  @Override
  public void close() {
    a.close();
    b.close();
    mr.close();
    cq.close();
    if (channel != null) {
      channel.close();
    }
    pd.close();
    arena.close();
  }
}
