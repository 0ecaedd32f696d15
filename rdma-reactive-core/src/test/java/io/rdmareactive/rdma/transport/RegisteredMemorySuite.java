package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import reactor.test.StepVerifier;

/**
 * Conformance classes that send from memory the test registers on the protection domain of loops
 * of its own: {@link #memory} (random bytes) and the loops are made before each test, and freed
 * after it, the connections first, since the protection domain outlives them.
 */
abstract class RegisteredMemorySuite extends TransportSuite {
  RdmaLoopResources loops;
  ProtectionDomain pd;
  MemorySegment memory;
  Arena arena;
  final List<MemoryRegion> regions = new ArrayList<>();

  /** The loops' name, the memory's size and the seed of its bytes. */
  abstract String loopsName();

  abstract long memorySize();

  abstract int seed();

  @BeforeEach
  void registerMemoryOnTheLoopsPd() {
    loops = RdmaLoopResources.create(loopsName(), 1);
    RdmaProvider provider = RdmaDevices.provider(fixture().provider());
    pd = loops.protectionDomain(provider, provider.devices().getFirst().name());
    arena = Arena.ofShared();
    memory = arena.allocate(memorySize(), 4096);
    byte[] pattern = random((int) memory.byteSize(), seed());
    MemorySegment.copy(pattern, 0, memory, ValueLayout.JAVA_BYTE, 0, pattern.length);
  }

  /** Registers {@code m} on the loops' protection domain; deregistered after the test. */
  MemoryRegion register(ProtectionDomain on, MemorySegment m, Set<Access> access) {
    MemoryRegion r = on.registerMemory(m, access);
    regions.add(r);
    return r;
  }

  @AfterEach
  void freeTheMemoryAndTheLoops() {
    closeAndCheckNothingLeaked(); // the connections first: the PD outlives them
    clients.clear();
    servers.clear();
    for (MemoryRegion r : regions) {
      r.close();
    }
    arena.close();
    StepVerifier.create(loops.disposeLater()).expectComplete().verify(WAIT);
    oneMoreConnection();
  }

  byte[] bytesAt(long offset, int length) {
    return memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
  }
}
