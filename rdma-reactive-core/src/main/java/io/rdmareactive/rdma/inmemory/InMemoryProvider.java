package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code in-memory} provider: verbs semantics in pure Java, for tests and machines without
 * RDMA. All its devices share one fabric, so QPs of different contexts (and of different devices)
 * connect to each other by QP number. Providers from the public constructors (and so the one
 * {@link java.util.ServiceLoader} finds) share one process-wide fabric, the embedded use;
 * {@link #create()} makes a provider on a fabric of its own, which no other provider's objects,
 * listeners or live counts see (one test's fabric, say).
 *
 * <p>Devices come from the {@code rdma.inmemory.devices} system property, a comma-separated list
 * of names (default {@code mem0}); a name suffixed {@code :basic} is a device without XRC, thread
 * domains and parent domains (like rxe), whose calls fail with
 * {@link io.rdmareactive.rdma.UnsupportedByDeviceException} (EOPNOTSUPP).
 *
 * <p>RNR is retried as on an RC QP: a SEND, SEND_WITH_IMM or RDMA_WRITE_WITH_IMM that finds no
 * receive posted (the QP's own, or its SRQ's) waits, and the QP's later work requests wait behind
 * it in order, each holding its send-queue slot; posting a receive there delivers the waiting
 * senders, oldest first, on the poster's thread, and their completions follow as if delivered at
 * posting. With RNR retry 0 the send fails at once with {@code RNR_RETRY_EXC_ERR}; with 1 to 6
 * it fails so once the retries times the responder's min RNR timer have passed (one daemon timer
 * thread for the process; RDMA CM connections get the kernel CM's timer 0, 655.36 ms, and each
 * side the other's retry count); with 7 it waits until a receive comes. A waiting sender that
 * goes to ERROR or is destroyed flushes what it holds ({@code WR_FLUSH_ERR}); a target QP that
 * does fails the senders waiting for it with {@code RETRY_EXC_ERR} (it no longer answers), and a
 * destroyed XRC SRQ with {@code REM_INV_REQ_ERR} (its number names nothing).
 *
 * <p>Simplifications, against a real RC transport: delivery is synchronous inside
 * {@code postSend} (or, after an RNR wait, inside the receive's post); any error completion moves
 * the QP to ERROR; destroying a QP flushes its waiting sends into its CQ; a send-queue slot is
 * held from posting until its completion is polled (unsignaled sends free theirs at once); UD is
 * not implemented.
 */
public final class InMemoryProvider implements RdmaProvider {
  /** The provider's name, as {@code rdma.provider} selects it. */
  public static final String NAME = "in-memory";

  private final Fabric fabric;
  private final List<DeviceSpec> devices;

  /** A provider on the process-wide fabric, with the devices {@code rdma.inmemory.devices} names. */
  public InMemoryProvider() {
    this(defaultDevices());
  }

  /** A provider on the process-wide fabric, with the devices {@code spec} names (see the class comment). */
  public InMemoryProvider(String spec) {
    this(spec, Fabric.SHARED);
  }

  /** A provider on a fabric of its own, with the devices {@code rdma.inmemory.devices} names. */
  public static InMemoryProvider create() {
    return create(defaultDevices());
  }

  /** A provider on a fabric of its own, with the devices {@code spec} names (see the class comment). */
  public static InMemoryProvider create(String spec) {
    return new InMemoryProvider(spec, new Fabric());
  }

  private static String defaultDevices() {
    return System.getProperty("rdma.inmemory.devices", "mem0");
  }

  private InMemoryProvider(String spec, Fabric fabric) {
    this.fabric = fabric;
    List<DeviceSpec> list = new ArrayList<>();
    for (String s : spec.split(",")) {
      String t = s.trim();
      if (t.isEmpty()) {
        continue;
      }
      int colon = t.indexOf(':');
      String name = colon < 0 ? t : t.substring(0, colon);
      String flavour = colon < 0 ? "" : t.substring(colon + 1).toLowerCase(Locale.ROOT);
      if (!flavour.isEmpty() && !flavour.equals("basic")) {
        throw new IllegalArgumentException("unknown in-memory device flavour '" + flavour + "' in '" + spec
            + "' (only ':basic' is known)");
      }
      boolean full = !flavour.equals("basic");
      list.add(new DeviceSpec(name, full, full, fabric));
    }
    this.devices = List.copyOf(list);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean isAvailable() {
    return !devices.isEmpty();
  }

  @Override
  public List<DeviceInfo> devices() {
    return devices.stream().map(d -> new DeviceInfo(d.name(), d.guid(), NAME)).toList();
  }

  @Override
  public RdmaContext open(String deviceName) {
    for (DeviceSpec d : devices) {
      if (d.name().equals(deviceName)) {
        return new MemContext(d);
      }
    }
    throw Fabric.failure("ibv_open_device", NativeCallException.ENODEV,
        "no in-memory device named '" + deviceName + "' (devices: "
            + devices.stream().map(DeviceSpec::name).toList() + ")");
  }

  /** Connections over the in-memory fabric, on the first device (see MemConnectionProvider). */
  @Override
  public ConnectionProvider connections() {
    if (devices.isEmpty()) {
      throw new UnsupportedOperationException("the in-memory provider has no devices (rdma.inmemory.devices is empty)");
    }
    return new MemConnectionProvider(devices.getFirst());
  }

  /**
   * Fault injection: raises IBV_EVENT_PORT_ERR on port 1 of {@code device}, as a real device does
   * when its link goes down (a netdev set down under Soft-RoCE, say). Every connection on that
   * device (of any provider on this one's fabric) fails as the native provider fails them: its
   * {@link io.rdmareactive.rdma.transport.RdmaConnection} ends with a {@link
   * io.rdmareactive.rdma.ConnectionException} (RESET) whose message names the event, and a connect
   * still waiting for its answer fails with it. The fabric itself stays up: later connections work.
   *
   * @return how many connection endpoints it failed (a connection with both ends on the device counts twice)
   * @throws IllegalArgumentException when this provider has no such device
   */
  public int portDown(String device) {
    if (devices.stream().noneMatch(d -> d.name().equals(device))) {
      throw new IllegalArgumentException("no in-memory device '" + device + "' (devices: "
          + devices.stream().map(DeviceSpec::name).toList() + ")");
    }
    // All marked before any fails: failing one disconnects it, which its peer must hear as this event too.
    List<MemConnectionEndpoint> failed = fabric.endpoints.stream().filter(ep -> ep.markPortError(device)).toList();
    failed.forEach(MemConnectionEndpoint::raisePortError);
    return failed.size();
  }

  /**
   * Live in-memory verbs objects by type ({@code context}, {@code pd}, {@code parent-domain},
   * {@code td}, {@code mr}, {@code channel}, {@code cq}, {@code qp}, {@code srq}, {@code xrcd}),
   * on this provider's fabric (the process-wide one's, for a provider from a constructor); types
   * with none live are left out, so an empty map means nothing leaked.
   */
  public Map<String, Integer> liveObjects() {
    return fabric.live();
  }

  /**
   * In-memory verbs objects created on this provider's fabric so far, by type (the types of
   * {@link #liveObjects()}, and {@code passive-endpoint}: endpoints listeners built for connect
   * requests), released or not: what a test reads to prove that something was never made, which
   * live counts cannot show once it is freed again.
   */
  public Map<String, Long> createdObjects() {
    return fabric.made();
  }

  /** A device: its name, which optional features it has, and the fabric its objects live on. */
  record DeviceSpec(String name, boolean xrc, boolean threadDomains, Fabric fabric) {
    long guid() {
      return 0x02_00_00_ff_fe_00_00_00L | (name.hashCode() & 0xFFFFFFL);
    }
  }
}
