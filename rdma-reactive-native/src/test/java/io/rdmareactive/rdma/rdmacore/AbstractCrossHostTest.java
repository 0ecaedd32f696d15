package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.conformance.CrossHost;
import io.rdmareactive.rdma.conformance.LeakCheck;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A test class that runs in both guests of scripts/softroce-vm-pair at once: its view of the pair,
 * and the leak check of this JVM's kernel objects, which starts after the CM's shared device
 * context is open ({@link CrossHostEnds#warmUp}).
 */
abstract class AbstractCrossHostTest {
  @RegisterExtension
  final CrossHost pair = new CrossHost();
  @RegisterExtension
  final LeakCheck leakCheck = NativeTestSupport.settlingLeakCheck();

  @BeforeAll
  static void warmUp() {
    CrossHostEnds.warmUp();
  }
}
