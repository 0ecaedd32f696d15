package io.rdmareactive.rdma.device;

import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.spi.RdmaProvider.DeviceInfo;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Loggers;

/**
 * Lists and opens RDMA devices through the selected provider. Selection comes from the
 * {@code rdma.provider} system property (or {@code RDMA_PROVIDER} environment variable):
 * {@code auto} (default: native when a device exists, otherwise in-memory, logged once),
 * {@code native} or {@code in-memory}.
 */
public final class RdmaDevices {
  private static volatile RdmaProvider selected;

  private RdmaDevices() {}

  /** The provider the current selection resolves to. */
  public static RdmaProvider provider() {
    RdmaProvider p = selected;
    if (p == null) {
      synchronized (RdmaDevices.class) {
        if ((p = selected) == null) {
          selected = p = select(configuredSelection());
        }
      }
    }
    return p;
  }

  /** The provider named {@code selection} ({@code auto}, {@code native}, {@code in-memory}). */
  public static RdmaProvider provider(String selection) {
    return select(selection);
  }

  /** The devices of the process-wide provider (see {@link #provider()}). */
  public static List<DeviceInfo> list() {
    return provider().devices();
  }

  /** Opens a device by name. */
  public static RdmaContext open(String deviceName) {
    return provider().open(deviceName);
  }

  /** Opens the first device the provider lists. */
  public static RdmaContext openFirst() {
    List<DeviceInfo> devices = list();
    if (devices.isEmpty()) {
      throw new RdmaException("no RDMA device found by provider '" + provider().name() + "'");
    }
    return open(devices.getFirst().name());
  }

  /** Opens {@code deviceName} on subscription and closes it when {@code body} terminates or is cancelled. */
  public static <T> Flux<T> withContext(String deviceName, Function<? super RdmaContext, ? extends Publisher<T>> body) {
    return Flux.using(() -> open(deviceName), body, RdmaContext::close);
  }

  /** {@link #open} as a Mono, for composition; the caller closes the context. */
  public static Mono<RdmaContext> openLater(String deviceName) {
    return Mono.fromCallable(() -> open(deviceName));
  }

  static String configuredSelection() {
    String s = System.getProperty("rdma.provider");
    if (s == null || s.isBlank()) {
      s = System.getenv("RDMA_PROVIDER");
    }
    return s == null || s.isBlank() ? "auto" : s.trim().toLowerCase(Locale.ROOT);
  }

  static RdmaProvider select(String selection) {
    return select(selection, ServiceLoader.load(RdmaProvider.class, RdmaDevices.class.getClassLoader())
        .stream().map(ServiceLoader.Provider::get).toList());
  }

  /** {@link #select(String)} among {@code all}. */
  static RdmaProvider select(String selection, List<RdmaProvider> all) {
    switch (selection) {
      case "auto" -> {
        boolean nativeFound = false;
        for (RdmaProvider p : all) {
          if (p.name().equals("native")) {
            nativeFound = true;
            if (p.isAvailable()) {
              return p;
            }
          }
        }
        RdmaProvider fallback = named(all, "in-memory");
        // Two different fixes: a missing jar in the build, or a missing device (or verbs libraries) on the
        // host. The logger is looked up here, on a path taken once per selection, not held in a field.
        Loggers.getLogger(RdmaDevices.class).info(nativeFound
            ? "rdma-reactive: no native RDMA device available (or libibverbs/librdmacm did not load), "
                + "using the in-memory provider"
            : "rdma-reactive: rdma-reactive-native is not on the classpath (add io.rdmareactive:rdma-reactive-native "
                + "for RDMA devices), using the in-memory provider");
        return fallback;
      }
      case "native", "in-memory" -> {
        return named(all, selection);
      }
      default -> throw new IllegalArgumentException(
          "rdma.provider must be auto, native or in-memory, was '" + selection + "'");
    }
  }

  private static RdmaProvider named(List<RdmaProvider> all, String name) {
    return all.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow(() -> new RdmaException(
        "provider '" + name + "' is not on the classpath"
            + (name.equals("native") ? " (add io.rdmareactive:rdma-reactive-native)" : "")));
  }
}
