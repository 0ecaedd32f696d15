package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import java.io.File;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** What the provider does on a host without RDMA devices: lists none, never crashes, opens nothing. */
class NativeProviderHostTest {

  @Test
  void isRegisteredAsAServiceNamedNative() {
    assertThat(ServiceLoader.load(RdmaProvider.class).stream().map(p -> p.get().name()))
        .contains("native");
    assertThat(RdmaDevices.provider("native")).isInstanceOf(NativeProvider.class);
  }

  @Test
  void withoutDevicesListsNoneAndIsUnavailable() {
    String[] devices = new File("/sys/class/infiniband").list();
    Assumptions.assumeTrue(devices == null || devices.length == 0,
        "this host has RDMA devices; the no-device behaviour is checked on hosts without");
    NativeProvider provider = new NativeProvider();
    assertThat(provider.devices()).isEmpty();
    assertThat(provider.isAvailable()).isFalse();
  }

  @Test
  void openingAnUnknownDeviceNamesIt() {
    Assumptions.assumeTrue(Ibverbs.isLoadable(), "libibverbs.so.1 is not installed here");
    assertThatThrownBy(() -> new NativeProvider().open("no-such-device0"))
        .isInstanceOf(NativeCallException.class)
        .hasMessageContaining("no-such-device0");
  }

  @Test
  void libraryBindsEverySymbolItUses() {
    Assumptions.assumeTrue(new File("/usr/lib/x86_64-linux-gnu/libibverbs.so.1").exists()
        || new File("/usr/lib64/libibverbs.so.1").exists(), "libibverbs.so.1 is not installed here");
    assertThatCode(Ibverbs::check).doesNotThrowAnyException();
    assertThat(Ibverbs.isLoadable()).isTrue();
  }
}
