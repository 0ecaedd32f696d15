package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Coalescing: what is queued goes in batches, several messages per SEND, and arrives as a message
 * each, in order, with sizes that batch, that do not (empty, fragmented) and all between; a
 * batch's buffer goes back only when its last message is released.
 */
public abstract class BatchConformance extends TransportSuite {

  @Test
  void queuedMessagesOfEverySizeCoalesceAndArriveWholeAndInOrder() {
    int n = 2000;
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      // Mostly small, now and then empty, one buffer exactly, or fragmented; each starts with its number.
      int size = i % 97 == 0 ? 0 : i % 89 == 0 ? 16 * 1024 : i % 83 == 0 ? 40_000 : 8 + (i * 31) % 300;
      byte[] p = random(size, i);
      if (size >= 4) {
        p[0] = (byte) (i >> 24);
        p[1] = (byte) (i >> 16);
        p[2] = (byte) (i >> 8);
        p[3] = (byte) i;
      }
      payloads.add(p);
    }
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server));
    Mono<List<byte[]>> echoed = c.inbound().receiveBytes().take(n).collectList();
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.fromIterable(payloads)).thenReturn(true), echoed)
            .map(t -> t.getT2()))
        .assertNext(got -> {
          for (int i = 0; i < n; i++) {
            assertThat(got.get(i)).as("message %d", i).isEqualTo(payloads.get(i));
          }
        })
        .expectComplete()
        .verify(WAIT);
    RdmaStatistics s = c.statistics();
    System.out.printf("%s: %d messages in %d SENDs%n", fixture().provider(), s.messagesSent(), s.dataSends());
    assertThat(s.messagesSent()).isEqualTo(n);
    assertThat(s.dataSends()).as("SENDs for %d queued messages", n).isLessThan(n / 2);
    assertThat(s.creditViolations() + s.receiverNotReady() + s.completionErrors()).isZero();
  }

  /**
   * A kept message pins its batch's buffer, not the others: with small buffers (five messages
   * each) and one message of the first batch held while hundreds more pass, the held one still
   * reads its own bytes, and once released the connection goes on as before.
   */
  @Test
  void aKeptMessageKeepsItsBatchBufferUntilItIsReleased() {
    int n = 500;
    AtomicReference<RdmaMessage> kept = new AtomicReference<>();
    Sinks.One<byte[]> keptBytesAtEnd = Sinks.one();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, 64).option(RdmaOption.BUFFER_COUNT, 4)
        .handle((in, out) -> in.receive().index().doOnNext(t -> {
          if (t.getT1() == 0) {
            kept.set(t.getT2()); // held: its buffer must not take the peer's next messages
          } else {
            t.getT2().release();
          }
          if (t.getT1() == n - 1) {
            RdmaMessage first = kept.get();
            keptBytesAtEnd.tryEmitValue(first.toByteArray());
            first.release();
          }
        }).then()));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, 64).option(RdmaOption.BUFFER_COUNT, 4));
    StepVerifier.create(c.outbound().send(Flux.range(0, n).map(i -> number(i)))).expectComplete().verify(WAIT);
    StepVerifier.create(keptBytesAtEnd.asMono())
        .assertNext(b -> assertThat(b).as("the kept message's bytes").isEqualTo(number(0)))
        .expectComplete()
        .verify(WAIT);
    assertThat(c.statistics().dataSends()).as("SENDs for %d queued messages", n).isLessThan(n);
    StepVerifier.create(c.outbound().sendString(Mono.just("after")).then()).expectComplete().verify(WAIT);
  }
}
