package io.rdmareactive.rdma.transport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * Where a connection's send sources enter: each {@code send(messages)} subscription, the start
 * marker and the sources handed back, from any thread, in order, until the drain takes them.
 */
final class SendIntake {
  private final ConnectionOperations connection;
  private final int sendCount;
  private final Queue<SendSource> newSources = new ConcurrentLinkedQueue<>();

  SendIntake(ConnectionOperations connection, int sendCount) {
    this.connection = connection;
    this.sendCount = sendCount;
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
}
