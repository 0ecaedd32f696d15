package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** The in-memory provider on the loopback address, with the full scale test (10,000 connections). */
public final class InMemoryFixture implements TransportFixture {
  /** The one instance: the provider's default fabric is shared by all tests of a JVM. */
  public static final InMemoryFixture INSTANCE = new InMemoryFixture();

  private InMemoryFixture() {}

  @Override
  public String provider() {
    return InMemoryProvider.NAME;
  }

  @Override
  public String host() {
    return "127.0.0.1";
  }

  @Override
  public Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }

  @Override
  public long endpointsBuiltForRequests() {
    return new InMemoryProvider().createdObjects().getOrDefault("passive-endpoint", 0L);
  }

  /** The in-memory RC QP retries RNR as rxe does (see InMemoryProvider's simplifications). */
  @Override
  public boolean retriesReceiverNotReady() {
    return true;
  }

  @Override
  public int scaleConnections() {
    return 10_000;
  }
}
