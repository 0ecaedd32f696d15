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

  /** The device's attributes (ibv_query_device). */
  DeviceAttributes queryDevice();

  /** The attributes of port {@code portNumber}, from 1 (ibv_query_port). */
  PortAttributes queryPort(int portNumber);

  /** The GID at {@code index} of {@code portNumber}, 16 bytes. */
  byte[] queryGid(int portNumber, int index);

  /** Allocates a protection domain (ibv_alloc_pd). */
  ProtectionDomain allocateProtectionDomain();

  /** A thread domain (ibv_alloc_td); unsupported on rxe. */
  ThreadDomain allocateThreadDomain();

  /** An XRC domain, shared between processes through a file's inode (seed ibv_open_xrcd). */
  XrcDomain openXrcDomain(XrcDomainOptions options);

  /** Creates a completion channel (ibv_create_comp_channel). */
  CompletionChannel createCompletionChannel();

  /** Creates a completion queue (ibv_create_cq). */
  CompletionQueue createCompletionQueue(CompletionQueueOptions options);

  /** Asynchronous device events (port changes, QP fatal errors...), as one hot stream per context. */
  Flux<AsyncEvent> asyncEvents();

  /** Allocates a PD on subscription, releases it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withProtectionDomain(Function<? super ProtectionDomain, ? extends Publisher<T>> body) {
    return Flux.using(this::allocateProtectionDomain, body, ProtectionDomain::close);
  }

  /** Allocates a thread domain on subscription, frees it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withThreadDomain(Function<? super ThreadDomain, ? extends Publisher<T>> body) {
    return Flux.using(this::allocateThreadDomain, body, ThreadDomain::close);
  }

  /** Opens an XRC domain on subscription, closes it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withXrcDomain(XrcDomainOptions options, Function<? super XrcDomain, ? extends Publisher<T>> body) {
    return Flux.using(() -> openXrcDomain(options), body, XrcDomain::close);
  }

  /** Creates a completion channel on subscription, destroys it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withCompletionChannel(Function<? super CompletionChannel, ? extends Publisher<T>> body) {
    return Flux.using(this::createCompletionChannel, body, CompletionChannel::close);
  }

  /** Creates a completion queue on subscription, destroys it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withCompletionQueue(CompletionQueueOptions options,
      Function<? super CompletionQueue, ? extends Publisher<T>> body) {
    return Flux.using(() -> createCompletionQueue(options), body, CompletionQueue::close);
  }

  /** Convenience: a CQ of {@code depth} entries on {@code channel} (vector 0), or polled only when null. */
  default CompletionQueue createCompletionQueue(int depth, @Nullable CompletionChannel channel) {
    return createCompletionQueue(CompletionQueueOptions.of(depth).withChannel(channel));
  }
}
