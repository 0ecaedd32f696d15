package io.rdmareactive.rdma.transport;

import org.junit.jupiter.api.Nested;

/**
 * Every transport conformance suite, by concern, for one provider: a provider's test extends this
 * and names its {@link TransportFixture}; JUnit runs each concern as a nested class of it.
 */
public abstract class TransportConformance {
  /** The provider under test. */
  protected abstract TransportFixture fixture();

  @Nested
  class DataPath extends DataPathConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Close extends CloseConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class ConnectErrors extends ConnectErrorConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class OptionsAndRawMode extends OptionsAndRawModeConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class LargeMessages extends LargeMessageConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Loops extends LoopConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class ConnectionLoops extends ConnectionLoopConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Limits extends LimitConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Liveness extends LivenessConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Admission extends AdmissionConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Batches extends BatchConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class RoguePeers extends RoguePeerConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class LoopNeighbours extends LoopNeighbourConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class Rendezvous extends RendezvousConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }

  @Nested
  class RendezvousRoguePeers extends RendezvousRogueConformance {
    @Override
    protected TransportFixture fixture() {
      return TransportConformance.this.fixture();
    }
  }
}
