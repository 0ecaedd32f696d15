package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.loop.CompletionEventLoop;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One loop of an {@link RdmaLoopResources}: a channel and its thread per (provider, device),
 * counted by the endpoints using it, and stopped, its channel closed, when the last gives it back.
 * Thread-safe (connections on any thread acquire and release).
 */
final class LoopChannels {
  private final String name;
  private final BiFunction<String, CompletionChannel, CompletionEventLoop> start;
  private final Consumer<CompletionChannel> closeChannel;
  private final Map<String, Entry> byKey = new HashMap<>();
  private final Map<CompletionChannel, Entry> byChannel = new IdentityHashMap<>();

  /** A loop named {@code name} whose threads {@code start} makes and whose channels {@code closeChannel} closes. */
  LoopChannels(String name, BiFunction<String, CompletionChannel, CompletionEventLoop> start,
      Consumer<CompletionChannel> closeChannel) {
    this.name = name;
    this.start = start;
    this.closeChannel = closeChannel;
  }

  /** The loop's channel for {@code device} of {@code provider}, opened (and its thread started) with its first user. */
  synchronized CompletionChannel acquire(ConnectionProvider provider, String device) {
    String key = provider.getClass().getName() + "/" + device;
    Entry e = byKey.get(key);
    if (e == null) {
      CompletionChannel ch = provider.openCompletionChannel(device);
      // One thread per loop and device: a second device's thread gets the device in its name.
      e = new Entry(key, ch, start.apply(byKey.isEmpty() ? name : name + "-" + device, ch));
      byKey.put(key, e);
      byChannel.put(ch, e);
    }
    e.users++;
    return e.channel;
  }

  /** The thread serving {@code channel}; null when it is not this loop's. */
  synchronized @Nullable CompletionEventLoop loopOf(CompletionChannel channel) {
    Entry e = byChannel.get(channel);
    return e == null ? null : e.loop;
  }

  /** Gives {@code channel} back; whether it was this loop's. */
  synchronized boolean release(CompletionChannel channel) {
    Entry e = byChannel.get(channel);
    if (e == null) {
      return false;
    }
    if (--e.users == 0) {
      byKey.remove(e.key);
      byChannel.remove(channel);
      e.loop.shutdown(); // its last CQ is gone: the thread ends once what is pending has run
      closeChannel.accept(channel);
    }
    return true;
  }

  /** Endpoints using {@code channel} now; 0 when it is not this loop's. */
  synchronized int users(CompletionChannel channel) {
    Entry e = byChannel.get(channel);
    return e == null ? 0 : e.users;
  }

  /** Endpoints using this loop's channels now, all devices together. */
  synchronized int users() {
    return byKey.values().stream().mapToInt(e -> e.users).sum();
  }

  /** Channels open on this loop (one per provider and device in use). */
  synchronized int size() {
    return byKey.size();
  }

  private static final class Entry {
    final String key;
    final CompletionChannel channel;
    final CompletionEventLoop loop;
    int users;

    Entry(String key, CompletionChannel channel, CompletionEventLoop loop) {
      this.key = key;
      this.channel = channel;
      this.loop = loop;
    }
  }
}
