package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.test.StepVerifier;

/**
 * {@link SourceAcks}: a source wholly posted completes once its sends completed, none failed, and
 * its rendezvous messages are released, also when its sends completed before it was wholly posted.
 */
class SourceAcksTest {
  private final AtomicBoolean settled = new AtomicBoolean(true);
  private final SourceAcks acks = new SourceAcks(sequence -> settled.get());

  /** A source whose subscriber is {@code sink}'s (a send() call's Mono). */
  private static SendSource source(MonoSink<Void> sink) {
    return new SendSource(null, null, new CoreSubscriber<Void>() {
      @Override
      public void onSubscribe(Subscription s) { }

      @Override
      public void onNext(Void v) { }

      @Override
      public void onError(Throwable t) {
        sink.error(t);
      }

      @Override
      public void onComplete() {
        sink.success();
      }
    }, null, 4);
  }

  @Test
  void aSourceWhoseSendsCompletedBeforeItsEndCompletesAtOnce() {
    StepVerifier.create(Mono.<Void>create(sink -> {
      acks.dataSendCompleted(true);
      acks.posted(source(sink), 1);
    })).verifyComplete();
  }

  @Test
  void aSourceWhoseSendsCompletedBeforeItsEndWaitsForItsRendezvousToBeReleased() {
    settled.set(false);
    AtomicBoolean done = new AtomicBoolean();
    Mono.<Void>create(sink -> {
      acks.dataSendCompleted(true);
      acks.posted(source(sink), 1);
    }).subscribe(null, e -> { }, () -> done.set(true));
    assertThat(done).as("the peer still reads a message of it").isFalse();
    settled.set(true);
    acks.acknowledge();
    assertThat(done).as("released: it completes").isTrue();
  }

  @Test
  void aSourceWhoseSendFailedBeforeItsEndNeverCompletesButFailsOnClose() {
    IllegalStateException closed = new IllegalStateException("closed");
    StepVerifier.create(Mono.<Void>create(sink -> {
      assertThat(acks.dataSendCompleted(false)).isEqualTo(1);
      acks.posted(source(sink), 1);
      acks.acknowledge();
      acks.failUnacknowledged(closed);
    })).verifyErrorSatisfies(e -> assertThat(e).isSameAs(closed));
  }

  @Test
  void sourcesCompleteInOrderAsTheirLastSendsComplete() {
    AtomicBoolean first = new AtomicBoolean();
    AtomicBoolean second = new AtomicBoolean();
    Mono.<Void>create(sink -> acks.posted(source(sink), 1)).subscribe(null, e -> { }, () -> first.set(true));
    Mono.<Void>create(sink -> acks.posted(source(sink), 2)).subscribe(null, e -> { }, () -> second.set(true));
    acks.dataSendCompleted(true);
    acks.acknowledge();
    assertThat(first).isTrue();
    assertThat(second).as("its last send is still out").isFalse();
    acks.dataSendCompleted(true);
    acks.acknowledge();
    assertThat(second).isTrue();
  }
}
