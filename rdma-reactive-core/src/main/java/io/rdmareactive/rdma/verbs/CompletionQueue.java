package io.rdmareactive.rdma.verbs;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * A completion queue. {@link #completions()} is the reactive face; {@link #poll},
 * {@link #requestNotification} and {@link #acknowledgeEvents} are the raw verbs beneath it.
 */
public interface CompletionQueue extends RdmaResource {
  /** The device context the CQ belongs to. */
  RdmaContext context();

  /** Actual depth (the provider may round the requested one up). */
  int depth();

  /** The completion channel its events go to; null when it has none (busy-poll only). */
  @Nullable CompletionChannel channel();

  /**
   * Polls at most {@code max} completions (ibv_poll_cq), handing each to {@code handler} as a
   * view valid only during the call. Allocates nothing.
   *
   * @return how many were polled
   */
  int poll(int max, WorkCompletionHandler handler);

  /** Arms the CQ for one event on its channel (ibv_req_notify_cq). */
  void requestNotification(boolean solicitedOnly);

  /** Acknowledges {@code count} events taken from the channel for this CQ (ibv_ack_cq_events). */
  void acknowledgeEvents(int count);

  /**
   * The completions of this CQ as a backpressured stream, with default options: event mode
   * when the CQ has a channel, busy-poll otherwise. See {@link CompletionStreamOptions}.
   */
  default Flux<WorkCompletion> completions() {
    return completions(CompletionStreamOptions.defaults());
  }

  /**
   * The completions of this CQ as a backpressured stream, waiting as {@code options} say. The
   * providers implement it with the library's completion engine; this package, below the engine,
   * does not name it.
   */
  Flux<WorkCompletion> completions(CompletionStreamOptions options);
}
