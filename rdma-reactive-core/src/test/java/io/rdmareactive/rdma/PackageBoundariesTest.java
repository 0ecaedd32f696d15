package io.rdmareactive.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layers as the compiler and jdeps see them: core's packages depend on each other without a
 * cycle, and its module exports the API and SPI packages only (anything else to named friends).
 */
class PackageBoundariesTest {
  private static final Path CLASSES = Path.of("target/classes");
  private static final Set<String> API = Set.of("io.rdmareactive.rdma", "io.rdmareactive.rdma.device",
      "io.rdmareactive.rdma.inmemory", "io.rdmareactive.rdma.spi", "io.rdmareactive.rdma.transport",
      "io.rdmareactive.rdma.verbs");

  @Test
  void coreExportsItsApiPackagesOnly() throws IOException {
    ModuleDescriptor module;
    try (InputStream in = Files.newInputStream(CLASSES.resolve("module-info.class"))) {
      module = ModuleDescriptor.read(in);
    }
    Set<String> unqualified = new TreeSet<>();
    for (ModuleDescriptor.Exports e : module.exports()) {
      if (!e.isQualified()) {
        unqualified.add(e.source());
      }
    }
    assertThat(unqualified).as("packages %s exports to everyone", module.name()).isEqualTo(new TreeSet<>(API));
    assertThat(module.packages()).as("every package of the module").containsAll(API);
  }

  @Test
  void corePackagesFormNoCycle(@TempDir Path plain) throws IOException {
    // jdeps reads a directory with a module-info as a module, and then wants every module it
    // requires; the package graph is the same without the descriptor.
    try (var files = Files.walk(CLASSES)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = plain.resolve(CLASSES.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (!p.getFileName().toString().equals("module-info.class")) {
          Files.copy(p, target);
        }
      }
    }
    Map<String, Set<String>> edges = packageGraph(plain);
    assertThat(edges).as("packages jdeps found").containsKeys("io.rdmareactive.rdma.transport",
        "io.rdmareactive.rdma.spi");
    List<String> cycle = findCycle(edges);
    assertThat(cycle).as("a cycle between packages, in %s", edges).isEmpty();
  }

  /** jdeps' package-level dependencies among this project's packages. */
  static Map<String, Set<String>> packageGraph(Path classes) {
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps in this JDK"));
    StringWriter out = new StringWriter();
    int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "-verbose:package", "-filter:none",
        "--ignore-missing-deps", classes.toString());
    assertThat(rc).as("jdeps: %s", out).isZero();
    Pattern edge = Pattern.compile("^\\s+(io\\.rdmareactive\\S*)\\s+->\\s+(io\\.rdmareactive\\S*)\\s");
    Map<String, Set<String>> edges = new TreeMap<>();
    for (String line : out.toString().split("\n")) {
      Matcher m = edge.matcher(line);
      if (m.find() && !m.group(1).equals(m.group(2))) {
        edges.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
      }
    }
    return edges;
  }

  /** One cycle in {@code edges} as a path of packages, or empty (depth-first, three colours). */
  static List<String> findCycle(Map<String, Set<String>> edges) {
    Map<String, Integer> state = new HashMap<>(); // absent: unseen, 1: on the path, 2: done
    for (String start : edges.keySet()) {
      if (state.containsKey(start)) {
        continue;
      }
      Deque<String> path = new ArrayDeque<>();
      Deque<Iterator<String>> its = new ArrayDeque<>();
      path.push(start);
      state.put(start, 1);
      its.push(edges.getOrDefault(start, Set.of()).iterator());
      while (!its.isEmpty()) {
        Iterator<String> it = its.peek();
        if (it.hasNext()) {
          String next = it.next();
          Integer s = state.get(next);
          if (s == null) {
            state.put(next, 1);
            path.push(next);
            its.push(edges.getOrDefault(next, Set.of()).iterator());
          } else if (s == 1) {
            List<String> cycle = new ArrayList<>();
            for (Iterator<String> p = path.descendingIterator(); p.hasNext(); ) {
              String pkg = p.next();
              if (!cycle.isEmpty() || pkg.equals(next)) {
                cycle.add(pkg);
              }
            }
            cycle.add(next);
            return cycle;
          }
        } else {
          its.pop();
          state.put(path.pop(), 2);
        }
      }
    }
    return List.of();
  }

  @Test
  void theCycleFinderFindsACycleAndAcceptsADag() {
    List<String> cycle = findCycle(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a")));
    assertThat(cycle).hasSize(4).containsOnly("a", "b", "c");
    assertThat(cycle.getFirst()).as("a closed path").isEqualTo(cycle.getLast());
    assertThat(findCycle(Map.of("a", Set.of("b", "c"), "b", Set.of("c"), "c", new HashSet<>()))).isEmpty();
  }
}
