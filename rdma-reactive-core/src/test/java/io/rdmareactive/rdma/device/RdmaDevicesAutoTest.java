package io.rdmareactive.rdma.device;

import io.rdmareactive.rdma.RdmaException;
import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code auto} selection's log line says why it fell back to in-memory: the native module
 * missing from the classpath, or present without a device. (Core's tests log through
 * slf4j-jdk14, so a java.util.logging handler sees Reactor's log lines.)
 */
class RdmaDevicesAutoTest {
  private final List<String> lines = new CopyOnWriteArrayList<>();
  private final Logger logger = Logger.getLogger(RdmaDevices.class.getName());
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord r) {
      lines.add(r.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private Level level;

  @BeforeEach
  void listen() {
    level = logger.getLevel();
    logger.setLevel(Level.INFO);
    logger.addHandler(handler);
  }

  @AfterEach
  void stop() {
    logger.removeHandler(handler);
    logger.setLevel(level);
  }

  @Test
  void withoutTheNativeModuleTheLineNamesTheMissingArtifact() {
    // Core's own test classpath has no native provider: the real ServiceLoader path.
    assertThat(RdmaDevices.select("auto").name()).isEqualTo("in-memory");
    assertThat(lines).anySatisfy(l -> assertThat(l)
        .contains("rdma-reactive-native is not on the classpath").contains("io.rdmareactive:rdma-reactive-native"));
    assertThat(lines).noneSatisfy(l -> assertThat(l).contains("no native RDMA device"));
  }

  @Test
  void withTheNativeModuleButNoDeviceTheLineSaysNoDevice() {
    RdmaProvider deviceless = new RdmaProvider() {
      @Override
      public String name() {
        return "native";
      }

      @Override
      public boolean isAvailable() {
        return false;
      }

      @Override
      public List<DeviceInfo> devices() {
        return List.of();
      }

      @Override
      public RdmaContext open(String deviceName) {
        throw new RdmaException("no device " + deviceName);
      }
    };
    assertThat(RdmaDevices.select("auto", List.of(deviceless, new InMemoryProvider())).name()).isEqualTo("in-memory");
    assertThat(lines).anySatisfy(l -> assertThat(l).contains("no native RDMA device available"));
    assertThat(lines).noneSatisfy(l -> assertThat(l).contains("not on the classpath"));
  }
}
