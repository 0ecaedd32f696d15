package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code native} provider: libibverbs through FFM. Lists devices with ibv_get_device_list;
 * a host without libibverbs or without devices simply lists none.
 */
public final class NativeProvider implements RdmaProvider {
  static final String NAME = "native";

  /** For ServiceLoader, which finds the provider through META-INF/services. */
  public NativeProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean isAvailable() {
    try {
      return !devices().isEmpty();
    } catch (Throwable t) {
      return false;
    }
  }

  @Override
  public List<DeviceInfo> devices() {
    if (!Ibverbs.isLoadable()) {
      return List.of();
    }
    List<DeviceInfo> out = new ArrayList<>();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment num = a.allocate(JAVA_INT);
      MemorySegment list = Ibverbs.getDeviceList(num);
      if (list.address() == 0) {
        return List.of(); // e.g. ENOSYS: no RDMA support in this kernel
      }
      try {
        int n = num.get(JAVA_INT, 0);
        MemorySegment devs = list.reinterpret(ADDRESS.byteSize() * n);
        for (int i = 0; i < n; i++) {
          MemorySegment dev = devs.getAtIndex(ADDRESS, i);
          out.add(new DeviceInfo(name(dev), Long.reverseBytes(Ibverbs.getDeviceGuid(dev)), NAME));
        }
      } finally {
        Ibverbs.freeDeviceList(list);
      }
    }
    return List.copyOf(out);
  }

  private static String name(MemorySegment dev) {
    MemorySegment s = Ibverbs.getDeviceName(dev);
    return s.address() == 0 ? "" : s.reinterpret(256).getString(0);
  }

  /** librdmacm's connection establishment (one process-wide instance; see {@link NativeConnectionProvider}). */
  @Override
  public ConnectionProvider connections() {
    return NativeConnectionProvider.INSTANCE;
  }

  /**
   * @throws NativeLibraryUnavailableException when libibverbs cannot be loaded
   * @throws NativeCallException (ENODEV) when no device has that name
   */
  @Override
  public RdmaContext open(String deviceName) {
    Ibverbs.check();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment num = a.allocate(JAVA_INT);
      MemorySegment list = Ibverbs.getDeviceList(num);
      if (list.address() == 0) {
        throw Native.failure("ibv_get_device_list", Native.lastErrno(), "looking for " + deviceName);
      }
      try {
        int n = num.get(JAVA_INT, 0);
        MemorySegment devs = list.reinterpret(ADDRESS.byteSize() * n);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          MemorySegment dev = devs.getAtIndex(ADDRESS, i);
          String name = name(dev);
          if (name.equals(deviceName)) {
            // The context keeps its own reference to the device: freeing the list afterwards is fine.
            return NativeContext.open(dev, name);
          }
          seen.add(name);
        }
        throw Native.failure("ibv_open_device", NativeCallException.ENODEV,
            "no RDMA device named '" + deviceName + "'; devices here: " + seen);
      } finally {
        Ibverbs.freeDeviceList(list);
      }
    }
  }
}
