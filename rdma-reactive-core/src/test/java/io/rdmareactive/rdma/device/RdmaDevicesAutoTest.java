package io.rdmareactive.rdma.device;

import io.rdmareactive.rdma.RdmaException;
import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The {@code auto} selection's log line says why it fell back to in-memory: the native module
 * missing from the classpath, or present without a device. Reactor's logger factory is swapped
 * for one that records what {@link RdmaDevices} logs at info level.
 */
class RdmaDevicesAutoTest {
  private final List<String> lines = new CopyOnWriteArrayList<>();

  @BeforeEach
  void record() {
    // Loggers made while a test runs are these (quiet for any other name), until the reset.
    Loggers.useCustomLoggers(name -> (Logger) Proxy.newProxyInstance(Logger.class.getClassLoader(),
        new Class<?>[] {Logger.class}, (proxy, method, args) -> {
              if (name.equals(RdmaDevices.class.getName()) && method.getName().equals("info") && args != null
                  && args.length == 1) {
                lines.add((String) args[0]);
              }
              return switch (method.getName()) {
                case "getName" -> name;
                case "isInfoEnabled", "isWarnEnabled", "isErrorEnabled" -> true;
                default -> method.getReturnType() == boolean.class ? false : null;
              };
            }));
  }

  @AfterEach
  void restore() {
    Loggers.resetLoggerFactory();
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
