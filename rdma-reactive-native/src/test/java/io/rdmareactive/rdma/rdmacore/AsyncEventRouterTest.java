package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.verbs.AsyncEvent;
import org.junit.jupiter.api.Test;

/** The names connections fail with: the verbs event, the device and what the event's element is. */
class AsyncEventRouterTest {
  @Test
  void eventsAreNamedAsVerbsNamesThemWithTheirDeviceAndElement() {
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.PORT_ERR, 10, 1L, "rxe0"))
        .isEqualTo("IBV_EVENT_PORT_ERR on rxe0 port 1");
    // ibv_get_async_event writes only the int of port_num: the union's upper bytes are stale.
    assertThat(AsyncEvent.Type.of(10)).isEqualTo(AsyncEvent.Type.PORT_ERR);
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.PORT_ERR, 10, 0xdead_0000_0002L, "mlx5_0"))
        .isEqualTo("IBV_EVENT_PORT_ERR on mlx5_0 port 2");
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.QP_FATAL, 1, 0x7f00_1234L, "rxe0"))
        .isEqualTo("IBV_EVENT_QP_FATAL on rxe0 (QP 0x7f001234)");
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.CQ_ERR, 0, 0xabcL, "rxe0"))
        .isEqualTo("IBV_EVENT_CQ_ERR on rxe0 (CQ 0xabc)");
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.DEVICE_FATAL, 8, 0, "rxe0"))
        .isEqualTo("IBV_EVENT_DEVICE_FATAL on rxe0");
    assertThat(AsyncEventRouter.describe(AsyncEvent.Type.of(99), 99, 0, "rxe0")).isEqualTo("ibv_event_type 99 on rxe0");
  }
}
