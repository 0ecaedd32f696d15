package io.rdmareactive.rdma.inmemory;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A test on a fabric of its own with device mem0 open, which must leave no object alive. */
abstract class InMemoryFabricTest {
  final InMemoryProvider provider = InMemoryProvider.create("mem0");
  Map<String, Integer> before;
  RdmaContext context;

  @BeforeEach
  void open() {
    before = provider.liveObjects();
    context = provider.open("mem0");
  }

  @AfterEach
  void closeAndCheck() {
    context.close();
    assertThat(provider.liveObjects()).as("nothing leaks").isEqualTo(before);
  }
}
