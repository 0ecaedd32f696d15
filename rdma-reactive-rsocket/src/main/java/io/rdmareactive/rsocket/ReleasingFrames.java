package io.rdmareactive.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmareactive.rdma.transport.RdmaMessage;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

/**
 * Hands each received message to RSocket as a {@link SegmentByteBuf} and releases it once
 * {@code onNext} returned: RSocket, like Reactor Netty's inbound, expects the transport to release
 * a frame after delivering it, and retains what it keeps beyond that (a zero-copy payload).
 */
final class ReleasingFrames implements CoreSubscriber<RdmaMessage> {
  private final CoreSubscriber<? super ByteBuf> actual;
  private final ByteBufAllocator alloc;

  ReleasingFrames(CoreSubscriber<? super ByteBuf> actual, ByteBufAllocator alloc) {
    this.actual = actual;
    this.alloc = alloc;
  }

  @Override
  public void onSubscribe(Subscription s) {
    actual.onSubscribe(s);
  }

  @Override
  public void onNext(RdmaMessage message) {
    ByteBuf frame = new SegmentByteBuf(alloc, message);
    try {
      actual.onNext(frame);
    } finally {
      if (frame.refCnt() > 0) {
        frame.release();
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    actual.onError(t);
  }

  @Override
  public void onComplete() {
    actual.onComplete();
  }

  @Override
  public Context currentContext() {
    return actual.currentContext();
  }
}
