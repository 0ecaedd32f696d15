package io.rdmareactive.benchmarks.jmh;

import reactor.core.publisher.Flux;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.loop.CompletionStreams;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A CQ without a device: {@link #add} makes completions pending, {@link #poll} hands them out
 * through one reused view (successful 64-byte receives with immediate data), as the native
 * provider's poll does over its {@code ibv_wc} array. No channel: busy-poll streams only.
 */
final class SyntheticCompletionQueue implements CompletionQueue {
  private final AtomicLong pending = new AtomicLong();
  private final View view = new View();
  private volatile boolean closed;

  void add(int n) {
    pending.addAndGet(n);
  }

  @Override
  public int poll(int max, WorkCompletionHandler handler) {
    long p = pending.get();
    int n = (int) Math.min(max, p);
    if (n == 0) {
      return 0;
    }
    pending.addAndGet(-n);
    for (int i = 0; i < n; i++) {
      view.wrId++;
      handler.onCompletion(view);
    }
    return n;
  }

  @Override
  public RdmaContext context() {
    throw new UnsupportedOperationException("a synthetic CQ has no context");
  }

  @Override
  public int depth() {
    return Integer.MAX_VALUE;
  }

  @Override
  public @Nullable CompletionChannel channel() {
    return null;
  }

  @Override
  public void requestNotification(boolean solicitedOnly) {}

  @Override
  public void acknowledgeEvents(int count) {}

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    closed = true;
  }

  private static final class View implements WorkCompletionView {
    long wrId;

    @Override public long wrId() { return wrId; }
    @Override public WorkCompletion.Status status() { return WorkCompletion.Status.SUCCESS; }
    @Override public WorkCompletion.Opcode opcode() { return WorkCompletion.Opcode.RECV; }
    @Override public int vendorError() { return 0; }
    @Override public int byteLength() { return 64; }
    @Override public int immediateData() { return 2; }
    @Override public boolean hasImmediate() { return true; }
    @Override public int qpNumber() { return 17; }
    @Override public int sourceQp() { return 18; }
  }

  @Override
  public Flux<WorkCompletion> completions(CompletionStreamOptions options) {
    return CompletionStreams.completions(this, options);
  }
}
