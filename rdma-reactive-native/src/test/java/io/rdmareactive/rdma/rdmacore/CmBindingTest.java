package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The CM binding's pure-Java parts: input checks, event decoding, errno mapping. No device needed. */
class CmBindingTest {

  @Test
  void badQueuePairOptionsAreRejectedWithWhatWasWrong() {
    assertThatThrownBy(() -> new CmQueuePairOptions(0, 1, 1, 1, 0, true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0/1");
    assertThatThrownBy(() -> CmQueuePairOptions.of(1).withMaxInlineData(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inline");
  }

  @Test
  void badAddressesFailBeforeAnyNativeCall() {
    assertThatThrownBy(() -> CmAddressInfo.resolve("10.0.0.1", 70_000, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("70000");
    assertThatThrownBy(() -> CmAddressInfo.resolve(null, 7471, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("host");
  }

  @Test
  void connParamCarriesPrivateDataAndRejectsMoreThanAUint8Length() {
    try (Arena arena = Arena.ofConfined()) {
      byte[] data = "hello".getBytes(StandardCharsets.US_ASCII);
      MemorySegment p = RdmaCm.connParam(arena, data);
      assertThat(Byte.toUnsignedInt(p.get(JAVA_BYTE, CmLayout.CONN_PARAM_PRIVATE_DATA_LEN))).isEqualTo(5);
      assertThat(p.get(ADDRESS, CmLayout.CONN_PARAM_PRIVATE_DATA).reinterpret(5).toArray(JAVA_BYTE)).isEqualTo(data);
      assertThat(Byte.toUnsignedInt(p.get(JAVA_BYTE, CmLayout.CONN_PARAM_RESPONDER_RESOURCES))).isEqualTo(0xFF);
      assertThat(RdmaCm.connParam(arena, new byte[0]).get(ADDRESS, CmLayout.CONN_PARAM_PRIVATE_DATA))
          .isEqualTo(MemorySegment.NULL);
      assertThatThrownBy(() -> RdmaCm.connParam(arena, new byte[256]))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
    }
  }

  @Test
  void connParamRetriesAreFiniteByDefaultAndCarryTheOptions() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment p = RdmaCm.connParam(arena, new byte[0]);
      assertThat(p.get(JAVA_BYTE, CmLayout.CONN_PARAM_RNR_RETRY_COUNT)).as("7 would retry forever").isEqualTo((byte) 6);
      assertThat(p.get(JAVA_BYTE, CmLayout.CONN_PARAM_RETRY_COUNT)).as("rxe retries forever at 7").isEqualTo((byte) 6);
      MemorySegment q = RdmaCm.connParam(arena, new byte[0], 3, 2);
      assertThat(q.get(JAVA_BYTE, CmLayout.CONN_PARAM_RETRY_COUNT)).isEqualTo((byte) 3);
      assertThat(q.get(JAVA_BYTE, CmLayout.CONN_PARAM_RNR_RETRY_COUNT)).isEqualTo((byte) 2);
    }
  }

  @Test
  void eventsAreCopiedWithTypeStatusIdsAndPrivateData() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment data = arena.allocateFrom("accepted", StandardCharsets.US_ASCII);
      MemorySegment e = arena.allocate(CmLayout.SIZEOF_CM_EVENT, 8);
      e.set(ADDRESS, CmLayout.CM_EVENT_ID, MemorySegment.ofAddress(0x1000));
      e.set(ADDRESS, CmLayout.CM_EVENT_LISTEN_ID, MemorySegment.ofAddress(0x2000));
      e.set(JAVA_INT, CmLayout.CM_EVENT_EVENT, 9); // RDMA_CM_EVENT_ESTABLISHED
      e.set(JAVA_INT, CmLayout.CM_EVENT_STATUS, 0);
      e.set(ADDRESS, CmLayout.CM_EVENT_PARAM_CONN_PRIVATE_DATA, data);
      e.set(JAVA_BYTE, CmLayout.CM_EVENT_PARAM_CONN_PRIVATE_DATA_LEN, (byte) 8);
      CmEvent event = CmEvent.copyOf(e);
      assertThat(event.type()).isEqualTo(CmEvent.Type.ESTABLISHED);
      assertThat(event.id()).isEqualTo(0x1000);
      assertThat(event.listenId()).isEqualTo(0x2000);
      assertThat(new String(event.privateData(), StandardCharsets.US_ASCII)).isEqualTo("accepted");

      e.set(JAVA_INT, CmLayout.CM_EVENT_EVENT, 10); // DISCONNECTED carries no private data
      assertThat(CmEvent.copyOf(e).type()).isEqualTo(CmEvent.Type.DISCONNECTED);
      assertThat(CmEvent.copyOf(e).privateData()).isEmpty();
    }
    assertThat(CmEvent.Type.of(8)).isEqualTo(CmEvent.Type.REJECTED);
    assertThat(CmEvent.Type.of((int) CmLayout.RDMA_CM_EVENT_TIMEWAIT_EXIT)).isEqualTo(CmEvent.Type.TIMEWAIT_EXIT);
    assertThat(CmEvent.Type.of(99)).isEqualTo(CmEvent.Type.UNKNOWN);
  }

  @Test
  void connectionErrnosBecomeConnectionExceptionsAndOthersStayNativeCallExceptions() {
    assertThat(RdmaCm.connectFailure("rdma_connect", NativeCallException.ECONNREFUSED, "x"))
        .isInstanceOfSatisfying(ConnectionException.class,
            e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.REFUSED))
        .hasCauseInstanceOf(NativeCallException.class);
    assertThat(RdmaCm.connectFailure("rdma_create_ep", NativeCallException.EADDRINUSE, "x"))
        .isInstanceOfSatisfying(ConnectionException.class,
            e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.ADDRESS_IN_USE));
    assertThat(RdmaCm.connectFailure("rdma_connect", NativeCallException.ETIMEDOUT, "x"))
        .isInstanceOfSatisfying(ConnectionException.class,
            e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.TIMED_OUT));
    assertThat(RdmaCm.connectFailure("rdma_create_ep", NativeCallException.ENODEV, "x"))
        .isInstanceOfSatisfying(ConnectionException.class,
            e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.UNREACHABLE));
    assertThat(RdmaCm.connectFailure("rdma_connect", NativeCallException.EINVAL, "x"))
        .isExactlyInstanceOf(NativeCallException.class)
        .satisfies(e -> assertThat(((NativeCallException) e).function()).isEqualTo("rdma_connect"));
  }
}
