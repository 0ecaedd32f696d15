package io.rdmareactive.samples;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.DeviceAttributes;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.RdmaContext;
import reactor.core.publisher.Mono;

/**
 * Lists RDMA devices, opens the first, prints its attributes and port 1, and allocates and frees
 * a protection domain through the reactive lifecycle. Exit code 0 when all of that worked.
 */
public final class Diagnostic {
  private Diagnostic() {}

  public static void main(String[] args) {
    RdmaProvider provider = RdmaDevices.provider();
    System.out.println("provider: " + provider.name());
    var devices = provider.devices();
    devices.forEach(d -> System.out.printf("device: %s guid %016x%n", d.name(), d.guid()));
    if (devices.isEmpty()) {
      System.out.println("no RDMA device");
      System.exit(2);
    }
    String name = args.length > 0 ? args[0] : devices.getFirst().name();
    try (RdmaContext ctx = RdmaDevices.open(name)) {
      DeviceAttributes dev = ctx.queryDevice();
      PortAttributes port = ctx.queryPort(1);
      System.out.printf("opened %s: fw %s, vendor 0x%x part %d, max QPs %d, max CQEs %d, max MRs %d, XRC %s%n",
          ctx.deviceName(), dev.firmwareVersion(), dev.vendorId(), dev.vendorPartId(), dev.maxQueuePairs(),
          dev.maxCompletionQueueEntries(), dev.maxMemoryRegions(), dev.supportsXrc() ? "yes" : "no");
      System.out.printf("port 1: %s, active MTU %d, link layer %s%n", port.state(),
          PortAttributes.mtuBytes(port.activeMtu()), port.linkLayer());
      String pd = ctx.withProtectionDomain(p -> Mono.just("allocated " + p)).blockLast();
      System.out.println("protection domain " + pd + " and freed");
    }
    System.out.println("diagnostic: OK");
  }
}
