package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import reactor.core.publisher.Flux;

/** Builds completion streams over a CQ's raw verbs (event loop per channel, or busy-poll). */
public final class CompletionStreams {
  private CompletionStreams() {}

  public static Flux<WorkCompletion> completions(CompletionQueue cq, CompletionStreamOptions options) {
    return Flux.error(new UnsupportedOperationException("completion streams: not yet implemented"));
  }
}
