package io.rdmareactive.benchmarks;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The median time of each step of a ping-pong's round trip, from the time stamps that the
 * measurement patch {@code benchmarks/latency-breakdown-stamps.patch} adds to the engine (class
 * {@code io.rdmareactive.rdma.loop.PathStamps}: a poll that returned a receive, a data post's
 * start and return, on each side). Without the patch there is nothing to read and it says so.
 * Round {@code i}: the client's poll returns the echo ({@code A_c[i]}), it posts the next ping
 * ({@code B_c[i]}, returning at {@code C_c[i]}), the server's poll returns it ({@code A_s[i+1]}),
 * the server posts the echo ({@code B_s[i+1]}), and the client's poll returns it ({@code A_c[i+1]}).
 */
final class PathBreakdown {
  private final @Nullable Class<?> stamps;

  PathBreakdown() {
    Class<?> c;
    try {
      c = Class.forName("io.rdmareactive.rdma.loop.PathStamps");
    } catch (ClassNotFoundException e) {
      c = null;
    }
    stamps = c;
  }

  /** Starts stamping, {@code client} being the client connection's completion thread. */
  void start(Thread client) throws ReflectiveOperationException {
    if (stamps != null) {
      field("client").set(null, client);
      ((int[]) field("count").get(null))[0] = 0;
      ((int[]) field("count").get(null))[1] = 0;
      Arrays.fill((long[]) field("emptyPolls").get(null), 0);
      Arrays.fill((long[]) field("polls").get(null), 0);
      field("on").setBoolean(null, true);
    }
  }

  /** Stops stamping and returns each step's median over the {@code n} rounds, in microseconds. */
  List<String> stop(int n) throws ReflectiveOperationException {
    List<String> lines = new ArrayList<>();
    if (stamps == null) {
      lines.add("path_breakdown n/a (run with benchmarks/latency-breakdown-stamps.patch applied)");
      return lines;
    }
    field("on").setBoolean(null, false);
    long[][][] t = (long[][][]) field("stamps").get(null);
    int[] count = (int[]) field("count").get(null);
    long[] empty = (long[]) field("emptyPolls").get(null);
    long[] polls = (long[]) field("polls").get(null);
    int rounds = Math.min(Math.min(count[0], count[1] - 1), t[0][0].length - 2) - 1;
    String[] names = {"client_rx_to_post", "client_post_syscall", "client_post_to_server_poll", "server_rx_to_post",
        "server_post_syscall", "server_post_to_client_poll", "round_trip", "client_post_to_downcall",
        "client_downcall", "client_downcall_to_server_poll", "server_post_to_downcall", "server_downcall",
        "server_downcall_to_client_poll", "client_posted_to_idle", "server_posted_to_idle",
        "server_idle_to_poll", "client_idle_to_poll"};
    long[][] steps = new long[names.length][Math.max(0, rounds)];
    for (int i = 1; i <= rounds; i++) {
      long ac = t[0][0][i];
      long bc = t[0][1][i];
      long as = t[1][0][i + 1];
      long bs = t[1][1][i + 1];
      long[] v = {bc - ac, t[0][2][i] - bc, as - bc, bs - as, t[1][2][i + 1] - bs, t[0][0][i + 1] - bs,
          t[0][0][i + 1] - ac, t[0][3][i] - bc, t[0][4][i] - t[0][3][i], as - t[0][3][i], t[1][3][i + 1] - bs,
          t[1][4][i + 1] - t[1][3][i + 1], t[0][0][i + 1] - t[1][3][i + 1], t[0][5][i] - t[0][2][i],
          t[1][5][i] - t[1][2][i], as - t[1][5][i], t[0][0][i + 1] - t[0][5][i]};
      for (int k = 0; k < v.length; k++) {
        steps[k][i - 1] = v[k];
      }
    }
    lines.add("path_rounds " + rounds);
    for (int k = 0; k < names.length; k++) {
      long[] s = steps[k];
      Arrays.sort(s);
      lines.add(String.format(Locale.ROOT, "path_p50_us %s %.2f", names[k], s.length == 0 ? Double.NaN : s[s.length / 2] / 1e3));
    }
    lines.add(String.format(Locale.ROOT, "polls_per_round_trip client %.2f (empty %.2f) server %.2f (empty %.2f)",
        (double) polls[0] / n, (double) empty[0] / n, (double) polls[1] / n, (double) empty[1] / n));
    return lines;
  }

  private Field field(String name) throws NoSuchFieldException {
    return stamps.getField(name);
  }
}
