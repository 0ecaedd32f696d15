package io.rdmareactive.rdma.verbs;

import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/** An opened RDMA device: the parent of every other verbs object. */
public interface RdmaContext extends RdmaResource {

  /** The device's name, e.g. {@code rxe0} or {@code mlx5_0}. */
  String deviceName();

  /** Name of the provider that opened it ({@code native} or {@code in-memory}). */
  String providerName();

  DeviceAttributes queryDevice();

  PortAttributes queryPort(int portNumber);

  /** The GID at {@code index} of {@code portNumber}, 16 bytes. */
  byte[] queryGid(int portNumber, int index);

  ProtectionDomain allocateProtectionDomain();

  /** A thread domain (ibv_alloc_td); unsupported on rxe. */
  ThreadDomain allocateThreadDomain();

  /** An XRC domain, shared between processes through a file's inode (seed ibv_open_xrcd). */
  XrcDomain openXrcDomain(XrcDomainOptions options);

  CompletionChannel createCompletionChannel();

  CompletionQueue createCompletionQueue(CompletionQueueOptions options);

  /** Asynchronous device events (port changes, QP fatal errors...), as one hot stream per context. */
  Flux<AsyncEvent> asyncEvents();

  /** Allocates a PD on subscription, releases it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withProtectionDomain(Function<? super ProtectionDomain, ? extends Publisher<T>> body) {
    return Flux.using(this::allocateProtectionDomain, body, ProtectionDomain::close);
  }

  default <T> Flux<T> withThreadDomain(Function<? super ThreadDomain, ? extends Publisher<T>> body) {
    return Flux.using(this::allocateThreadDomain, body, ThreadDomain::close);
  }

  default <T> Flux<T> withXrcDomain(XrcDomainOptions options, Function<? super XrcDomain, ? extends Publisher<T>> body) {
    return Flux.using(() -> openXrcDomain(options), body, XrcDomain::close);
  }

  default <T> Flux<T> withCompletionChannel(Function<? super CompletionChannel, ? extends Publisher<T>> body) {
    return Flux.using(this::createCompletionChannel, body, CompletionChannel::close);
  }

  default <T> Flux<T> withCompletionQueue(CompletionQueueOptions options,
      Function<? super CompletionQueue, ? extends Publisher<T>> body) {
    return Flux.using(() -> createCompletionQueue(options), body, CompletionQueue::close);
  }

  /** Convenience: a CQ of {@code depth} entries on {@code channel} (vector 0), or polled only when null. */
  default CompletionQueue createCompletionQueue(int depth, @Nullable CompletionChannel channel) {
    return createCompletionQueue(CompletionQueueOptions.of(depth).withChannel(channel));
  }
}
