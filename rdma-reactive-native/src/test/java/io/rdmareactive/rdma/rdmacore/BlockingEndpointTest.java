package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The librdmacm binding against a real RDMA CM (Soft-RoCE VM: rxe0 on dummy0, 10.0.0.1; override
 * with RDMA_TEST_ADDRESS): blocking and asynchronous connection setup, message exchange through
 * rdma_post_send/recv and rdma_get_send/recv_comp, interoperation with librdmacm's own C
 * rdma_server/rdma_client, refused connections, and no leaked ids afterwards.
 */
@Tag("native")
class BlockingEndpointTest {
  private static final String ADDRESS = TestSettings.testAddress();
  private static final long WAIT_MILLIS = 30_000;
  private static final Duration WAIT = Duration.ofMillis(WAIT_MILLIS);

  private ExecutorService executor;

  @BeforeEach
  void setUp() {
    executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "cm-test");
      t.setDaemon(true); // a native wait that never returns must not keep the JVM alive
      return t;
    });
  }

  @AfterEach
  void everythingDestroyed() throws Exception {
    executor.shutdownNow();
    // (e) no CM id, listener or event channel of this binding is left, in Java or in the kernel.
    assertThat(KernelResources.cmEventChannels()).as("open rdma_cm event channels").isZero();
    assertThat(kernelCmIdsOfThisProcess()).as("kernel cm_ids of this JVM").isEmpty();
  }

  // (a) one JVM, blocking calls: private data both ways, a message each way, content checked.
  @Test
  void blockingConnectAcceptAndExchangeMessages() throws Exception {
    CmQueuePairOptions qp = CmQueuePairOptions.of(4);
    byte[] hello = bytes("client-hello");
    byte[] welcome = bytes("server-welcome");
    try (BlockingListener listener = BlockingListener.open(ADDRESS, 0, qp, 8)) {
      assertThat(listener.port()).isPositive();
      // The leak check below is not vacuous: the kernel lists this listener under our pid.
      assertThat(kernelCmIdsOfThisProcess()).anyMatch(l -> l.contains(":" + listener.port()));
      Future<byte[]> server = executor.submit(() -> {
        try (BlockingEndpoint ep = listener.getRequest(WAIT_MILLIS); Arena arena = Arena.ofShared()) {
          assertThat(ep).as("connection request").isNotNull();
          assertThat(ep.queuePairNumber()).isPositive();
          byte[] requestData = ep.peerPrivateData();
          MemorySegment buf = arena.allocate(64);
          try (MemoryRegion mr = ep.registerMessages(buf)) {
            // Misuse is a typed error before any native call: a range outside the region.
            assertThatThrownBy(() -> ep.postReceive(6, mr, 48, 32)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outside the memory region of 64 bytes");
            ep.postReceive(7, mr, 0, 32);
            ep.accept(welcome);
            WorkCompletion recv = ep.receiveCompletion(WAIT);
            assertThat(recv).isNotNull();
            assertThat(recv.isSuccess()).as("%s", recv).isTrue();
            assertThat(recv.opcode()).isEqualTo(WorkCompletion.Opcode.RECV);
            assertThat(recv.wrId()).isEqualTo(7);
            assertThat(recv.byteLength()).isEqualTo(4);
            assertThat(string(buf, 0, recv.byteLength())).isEqualTo("ping");
            buf.asSlice(32, 4).copyFrom(MemorySegment.ofArray(bytes("pong")));
            ep.postSend(8, mr, 32, 4, SendRequest.SIGNALED);
            WorkCompletion sent = ep.sendCompletion(WAIT);
            assertThat(sent).isNotNull();
            assertThat(sent.isSuccess()).as("%s", sent).isTrue();
            assertThat(sent.opcode()).isEqualTo(WorkCompletion.Opcode.SEND);
            assertThat(sent.wrId()).isEqualTo(8);
            // The endpoint cannot go while its memory is registered: typed error, nothing freed.
            assertThatThrownBy(ep::close).isInstanceOf(ResourceBusyException.class);
          }
          return requestData;
        }
      });

      try (CmAddressInfo to = CmAddressInfo.active(ADDRESS, listener.port());
          BlockingEndpoint client = BlockingEndpoint.create(to, qp);
          Arena arena = Arena.ofShared()) {
        MemorySegment buf = arena.allocate(64);
        try (MemoryRegion mr = client.registerMessages(buf)) {
          client.postReceive(1, mr, 32, 32); // before connecting: the reply may come at once
          byte[] acceptData = client.connect(hello);
          assertThat(startsWith(acceptData, welcome)).as("accept private data %s", Arrays.toString(acceptData)).isTrue();
          assertThat(startsWith(client.peerPrivateData(), welcome)).isTrue();
          buf.copyFrom(MemorySegment.ofArray(bytes("ping")));
          client.postSend(2, mr, 0, 4, SendRequest.SIGNALED);
          WorkCompletion sent = client.sendCompletion(WAIT);
          assertThat(sent).isNotNull();
          assertThat(sent.isSuccess()).as("%s", sent).isTrue();
          assertThat(sent.wrId()).isEqualTo(2);
          WorkCompletion recv = client.receiveCompletion(WAIT);
          assertThat(recv).isNotNull();
          assertThat(recv.isSuccess()).as("%s", recv).isTrue();
          assertThat(recv.wrId()).isEqualTo(1);
          assertThat(string(buf, 32, recv.byteLength())).isEqualTo("pong");
          byte[] requestData = server.get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
          assertThat(startsWith(requestData, hello)).as("request private data %s", Arrays.toString(requestData)).isTrue();
          client.disconnect();
        }
      }
    }
  }

  // (b) asynchronous CM: connect through an event channel, ESTABLISHED, then DISCONNECTED on both sides.
  @Test
  void asynchronousConnectEstablishAndDisconnectThroughTheEventLoop() throws Exception {
    CmQueuePairOptions qp = CmQueuePairOptions.of(2);
    BlockingQueue<CmEvent> clientEvents = new LinkedBlockingQueue<>();
    BlockingQueue<CmEvent> serverEvents = new LinkedBlockingQueue<>();
    try (CmEventLoop loop = new CmEventLoop(); BlockingListener listener = BlockingListener.open(ADDRESS, 0, qp, 8)) {
      Future<BlockingEndpoint> server = executor.submit(() -> {
        BlockingEndpoint ep = listener.getRequest(WAIT_MILLIS);
        assertThat(ep).isNotNull();
        ep.accept(bytes("async-welcome"));
        loop.attach(ep.id(), (e, event) -> serverEvents.add(event));
        return ep;
      });
      List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
      CmEndpoint client = loop.connect(ADDRESS, listener.port(), qp, bytes("async-hello"), Duration.ofSeconds(20),
          (e, event) -> {
            threads.add(Thread.currentThread().getName());
            clientEvents.add(event);
          }).get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
      try (client; BlockingEndpoint accepted = server.get(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
        assertThat(startsWith(client.peerPrivateData(), bytes("async-welcome"))).isTrue();
        assertThat(startsWith(accepted.peerPrivateData(), bytes("async-hello"))).isTrue();
        assertThat(client.queuePairNumber()).isPositive();
        CmEvent established = clientEvents.poll(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        assertThat(established).isNotNull();
        assertThat(established.type()).isEqualTo(CmEvent.Type.ESTABLISHED);
        assertThat(established.id()).isEqualTo(client.idAddress());
        assertThat(threads).allMatch(n -> n.startsWith("rdma-cm-"));
        // The loop holds leases: closing it now is refused, before any native call.
        assertThatThrownBy(loop::close).isInstanceOf(ResourceBusyException.class);

        client.disconnect(); // asynchronous on an attached id: returns at once (DREQ sent)
        CmEvent serverDisconnected = serverEvents.poll(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        assertThat(serverDisconnected).isNotNull();
        assertThat(serverDisconnected.type()).isEqualTo(CmEvent.Type.DISCONNECTED);
        assertThat(serverDisconnected.id()).isEqualTo(accepted.id().idAddress());
        // The IB CM answers the DREQ (DREP) only when the receiving side disconnects too.
        accepted.disconnect();
        CmEvent clientDisconnected = clientEvents.poll(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        assertThat(clientDisconnected).isNotNull();
        assertThat(clientDisconnected.type()).isEqualTo(CmEvent.Type.DISCONNECTED);
        assertThat(clientDisconnected.id()).isEqualTo(client.idAddress());
      }
      assertThatThrownBy(client::queuePairNumber).isInstanceOf(ResourceClosedException.class);
    }
  }

  // (c1) Java server, librdmacm's C rdma_client: it sends 16 bytes first, then receives 16.
  @Test
  void javaServerAgainstTheCRdmaClient() throws Exception {
    int port = freePortGuess();
    // The public factory: one work request each way, 16 inline bytes (rdma_client asks for inline sends).
    try (BlockingListener listener = BlockingListener.listen(ADDRESS, port, 1, 16, 1); Arena arena = Arena.ofShared()) {
      Process c = start("rdma_client", "-s", ADDRESS, "-p", Integer.toString(port));
      try (BlockingEndpoint ep = listener.getRequest(WAIT)) {
        assertThat(ep).as("request from rdma_client").isNotNull();
        MemorySegment buf = arena.allocate(32);
        try (MemoryRegion mr = ep.registerMessages(buf)) {
          ep.postReceive(11, mr, 0, 16);
          ep.accept(new byte[0]);
          WorkCompletion recv = ep.receiveCompletion(WAIT);
          assertThat(recv).isNotNull();
          assertThat(recv.isSuccess()).as("%s", recv).isTrue();
          assertThat(recv.byteLength()).isEqualTo(16);
          buf.asSlice(16, 16).fill((byte) 0x5A);
          ep.postSend(12, mr, 16, 16, SendRequest.SIGNALED);
          WorkCompletion sent = ep.sendCompletion(WAIT);
          assertThat(sent).isNotNull();
          assertThat(sent.isSuccess()).as("%s", sent).isTrue();
          ep.disconnect();
        }
      }
      assertExitsZero(c, "rdma_client");
    }
  }

  // (c2) Java client, librdmacm's C rdma_server: it receives 16 bytes first, then sends 16.
  @Test
  void javaClientAgainstTheCRdmaServer() throws Exception {
    int port = freePortGuess();
    Process c = start("rdma_server", "-s", ADDRESS, "-p", Integer.toString(port));
    try (Arena arena = Arena.ofShared()) {
      MemorySegment buf = arena.allocate(32);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
      while (true) {
        // The public factory: rdma_getaddrinfo + rdma_create_ep, one work request each way, 16 inline bytes.
        try (BlockingEndpoint ep = BlockingEndpoint.create(ADDRESS, port, 1, 16);
            MemoryRegion mr = ep.registerMessages(buf)) {
          ep.postReceive(21, mr, 16, 16);
          try {
            ep.connect(new byte[0]);
          } catch (ConnectionException e) {
            // rdma_server may not listen yet: retry until it does.
            assertThat(e.reason()).isEqualTo(ConnectionException.Reason.REFUSED);
            assertThat(c.isAlive()).as("rdma_server still running").isTrue();
            assertThat(System.nanoTime() - deadline).as("rdma_server listening in time").isNegative();
            Thread.sleep(200);
            continue;
          }
          buf.asSlice(0, 16).fill((byte) 0x33);
          ep.postSend(22, mr, 0, 16, SendRequest.SIGNALED);
          WorkCompletion sent = ep.sendCompletion(WAIT);
          assertThat(sent).isNotNull();
          assertThat(sent.isSuccess()).as("%s", sent).isTrue();
          WorkCompletion recv = ep.receiveCompletion(WAIT);
          assertThat(recv).isNotNull();
          assertThat(recv.isSuccess()).as("%s", recv).isTrue();
          assertThat(recv.wrId()).isEqualTo(21);
          assertThat(recv.byteLength()).isEqualTo(16);
          ep.disconnect();
          break;
        }
      }
    } finally {
      if (c.isAlive() && !c.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
        c.destroyForcibly();
      }
    }
    assertExitsZero(c, "rdma_server");
  }

  // (d) a port nobody listens on: a typed, prompt failure, never a hang, both ways.
  @Test
  void connectingToAPortNobodyListensOnFailsPromptly() throws Exception {
    int port = freePortGuess();
    long start = System.nanoTime();
    try (CmAddressInfo to = CmAddressInfo.active(ADDRESS, port); BlockingEndpoint ep = BlockingEndpoint.create(to, CmQueuePairOptions.of(1))) {
      assertThatThrownBy(() -> ep.connect(bytes("anyone?")))
          .isInstanceOfSatisfying(ConnectionException.class, e -> assertThat(e.reason())
              .isIn(ConnectionException.Reason.REFUSED, ConnectionException.Reason.UNREACHABLE));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));

    try (CmEventLoop loop = new CmEventLoop()) {
      long asyncStart = System.nanoTime();
      var future = loop.connect(ADDRESS, port, CmQueuePairOptions.of(1), new byte[0], Duration.ofSeconds(10),
          (e, event) -> {});
      assertThatThrownBy(() -> future.get(WAIT_MILLIS, TimeUnit.MILLISECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause().isInstanceOfSatisfying(ConnectionException.class, e -> assertThat(e.reason())
              .isIn(ConnectionException.Reason.REFUSED, ConnectionException.Reason.UNREACHABLE));
      assertThat(Duration.ofNanos(System.nanoTime() - asyncStart)).isLessThan(Duration.ofSeconds(12));
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static String string(MemorySegment buf, long offset, int length) {
    return new String(buf.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
  }

  /** {@code data} starts with {@code prefix} and is zero after it (InfiniBand pads private data). */
  private static boolean startsWith(byte[] data, byte[] prefix) {
    if (data.length < prefix.length || !Arrays.equals(Arrays.copyOf(data, prefix.length), prefix)) {
      return false;
    }
    for (int i = prefix.length; i < data.length; i++) {
      if (data[i] != 0) {
        return false;
      }
    }
    return true;
  }

  private static int freePortGuess() {
    return ThreadLocalRandom.current().nextInt(20_000, 40_000);
  }

  private static Process start(String... command) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  private static void assertExitsZero(Process p, String name) throws Exception {
    boolean exited = p.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS);
    if (!exited) {
      p.destroyForcibly();
    }
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(exited).as("%s exited; output: %s", name, output).isTrue();
    assertThat(p.exitValue()).as("%s exit code; output: %s", name, output).isZero();
  }

  /** Lines of {@code rdma resource show cm_id} that belong to this JVM. */
  private static List<String> kernelCmIdsOfThisProcess() throws Exception {
    Process p;
    try {
      p = new ProcessBuilder("rdma", "resource", "show", "cm_id").redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("the rdma tool (iproute2) is needed to check for leaked cm_ids", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return out.lines().filter(BlockingEndpointTest::ownedByThisProcess).toList();
  }

  /**
   * The kernel names the creating thread (its tid), not the process: a line is ours when that
   * thread is one of this JVM's, or has ended (a process that ended has its ids destroyed).
   */
  private static boolean ownedByThisProcess(String line) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(" pid (\\d+) ").matcher(line + " ");
    if (!m.find()) {
      return false;
    }
    String tid = m.group(1);
    return java.nio.file.Files.exists(java.nio.file.Path.of("/proc/self/task", tid))
        || !java.nio.file.Files.exists(java.nio.file.Path.of("/proc", tid));
  }
}
