package io.rdmareactive.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * JFR's execution samples over a {@link LatencyProbe} window, summed per thread into what the
 * connection's work is made of: each sample inside the connection's drain counts for the step of
 * the drain it is in (the method {@code drainOnce} called), each one outside it for the poll loop
 * (an empty {@code ibv_poll_cq} round, or copying a completion). A share of samples times the
 * thread's CPU per round trip is the time that step takes per round trip. Samples of a thread in
 * native code (a non-critical downcall, such as {@code ibv_post_send} on rxe) come from JFR's
 * native sampler and are marked so.
 */
final class ProbeProfile {
  private static final String DRAIN = "io.rdmareactive.rdma.transport.ConnectionOperations.drainOnce";
  private final Recording recording = new Recording();

  ProbeProfile(Duration period) {
    recording.enable("jdk.ExecutionSample").withPeriod(period);
    recording.enable("jdk.NativeMethodSample").withPeriod(period);
    recording.start();
  }

  /** Stops the recording and returns, per thread with samples, each step's samples and share. */
  List<String> stop(Path file) throws IOException {
    recording.stop();
    recording.dump(file);
    recording.close();
    Map<String, Map<String, Integer>> byThread = new TreeMap<>();
    Map<String, Map<String, Integer>> selfByThread = new TreeMap<>();
    for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
      String type = e.getEventType().getName();
      boolean nativeSample = type.equals("jdk.NativeMethodSample");
      if (!nativeSample && !type.equals("jdk.ExecutionSample")) {
        continue;
      }
      RecordedThread t = e.getThread("sampledThread");
      RecordedStackTrace stack = e.getStackTrace();
      if (t == null || stack == null || stack.getFrames().isEmpty()) {
        continue;
      }
      String thread = t.getJavaName() == null ? "?" : t.getJavaName().replace(' ', '_');
      List<RecordedFrame> frames = stack.getFrames(); // top first
      String step = (nativeSample ? "native:" : "") + step(frames);
      byThread.computeIfAbsent(thread, k -> new HashMap<>()).merge(step, 1, Integer::sum);
      selfByThread.computeIfAbsent(thread, k -> new HashMap<>()).merge((nativeSample ? "native:" : "") + name(frames.get(0)), 1, Integer::sum);
    }
    List<String> lines = new ArrayList<>();
    summarize(lines, "step", byThread, 40);
    summarize(lines, "self", selfByThread, 25);
    return lines;
  }

  private static void summarize(List<String> lines, String kind, Map<String, Map<String, Integer>> byThread, int top) {
    byThread.forEach((thread, steps) -> {
      int total = steps.values().stream().mapToInt(Integer::intValue).sum();
      if (total < 20) {
        return; // an idle thread: nothing to account for
      }
      steps.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(top)
          .forEach(s -> lines.add(String.format(Locale.ROOT, "profile_%s %s %s %d %.1f%%", kind, thread, s.getKey(),
              s.getValue(), 100.0 * s.getValue() / total)));
      lines.add(String.format(Locale.ROOT, "profile_%s %s TOTAL %d 100%%", kind, thread, total));
    });
  }

  /**
   * The step a sample is in: inside the drain, the method the drain called (and below a user
   * callback's send, the part it reached); outside, the loop's own frame nearest the top.
   */
  private static String step(List<RecordedFrame> frames) {
    for (int i = frames.size() - 1; i > 0; i--) {
      if (name(frames.get(i)).equals(DRAIN)) {
        return "drain:" + shortName(frames.get(i - 1));
      }
    }
    for (RecordedFrame f : frames) {
      String n = name(f);
      if (n.startsWith("io.rdmareactive.rdma.transport.CompletionIntake.")) {
        return "poll:" + shortName(f); // a completion copied into the ring, or the drain's entry
      }
    }
    for (RecordedFrame f : frames) {
      String n = name(f);
      if (n.startsWith("io.rdmareactive.") || n.startsWith("reactor.")) {
        return "loop:" + shortName(f);
      }
    }
    return "other:" + shortName(frames.get(0));
  }

  private static String name(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }

  private static String shortName(RecordedFrame f) {
    String type = f.getMethod().getType().getName();
    return type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName();
  }
}
