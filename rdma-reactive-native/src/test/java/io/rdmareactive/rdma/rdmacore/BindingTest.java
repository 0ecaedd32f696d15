package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The binding rules of the native module: each C function is bound exactly once, only by the
 * three binding classes, and a missing library fails typed when called, not at class loading.
 */
class BindingTest {
  private static final List<String> BINDINGS = List.of("Ibverbs.java", "Librdmacm.java", "Libc.java");
  /** A function name passed to a binding helper: bind("x", ...), errno("x", ...), plain("x", ...). */
  private static final Pattern BIND = Pattern.compile("\\b(?:bind|errno|plain)\\(\\s*\"(\\w+)\"");

  @Test
  void eachCFunctionIsBoundOnceInTheWholeModule() throws IOException {
    Map<String, String> boundIn = new LinkedHashMap<>();
    List<String> twice = new ArrayList<>();
    for (Path file : mainSources()) {
      String name = file.getFileName().toString();
      String text = Files.readString(file);
      if (!name.equals("Native.java")) {
        assertThat(text).as("%s calls the linker itself: bind through Native.Library in a binding class", name)
            .doesNotContain("downcallHandle(");
      }
      if (!BINDINGS.contains(name)) {
        assertThat(text).as("%s binds C functions: only %s may", name, BINDINGS)
            .doesNotContain("Native.library(").doesNotContain("Native.libc(").doesNotContain("LIB.bind(");
        continue;
      }
      Matcher m = BIND.matcher(text);
      while (m.find()) {
        String before = boundIn.put(m.group(1), name);
        if (before != null) {
          twice.add(m.group(1) + " (" + before + ", " + name + ")");
        }
      }
    }
    assertThat(twice).as("C functions bound more than once").isEmpty();
    assertThat(boundIn).containsKeys("ibv_reg_mr", "ibv_get_cq_event", "rdma_create_ep", "poll", "eventfd");

    // What the binding classes registered when they initialized is exactly what the scan found.
    Ibverbs.isLoadable();
    Librdmacm.GET_DEVICES.type();
    Libc.strerror(1);
    Set<String> registered = new HashSet<>(Native.boundFunctions());
    registered.removeIf(n -> n.startsWith("test_"));
    assertThat(registered).containsExactlyInAnyOrderElementsOf(boundIn.keySet());
  }

  @Test
  void bindingAFunctionASecondTimeFails() {
    Libc.strerror(1); // libc's poll is bound by now
    assertThatThrownBy(() -> Native.libc().bind("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS), true))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("poll is bound twice");
  }

  @Test
  void aMissingLibraryFailsTypedWhenCalledAndSaysWhich() throws Throwable {
    Native.Library missing = Native.library("libtest-no-such-library.so.9");
    MethodHandle h = missing.bind("test_missing_function", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    assertThat(h.type().parameterCount()).as("call state + the pointer").isEqualTo(2);
    assertThatThrownBy(() -> {
      int ignored = (int) h.invokeExact(Native.callState(), MemorySegment.NULL);
    }).isInstanceOf(NativeLibraryUnavailableException.class).hasMessageContaining("libtest-no-such-library.so.9");
    assertThatThrownBy(missing::check).isInstanceOf(NativeLibraryUnavailableException.class);
  }

  @Test
  void aMissingSymbolFailsTypedWhenCalled() {
    Native.Library libc = Native.libc();
    MethodHandle h = libc.bind("test_no_such_symbol_in_libc", FunctionDescriptor.ofVoid(), false);
    assertThatThrownBy(() -> {
      h.invokeExact();
    }).isInstanceOf(NativeLibraryUnavailableException.class)
        .hasMessageContaining("test_no_such_symbol_in_libc");
    assertThatThrownBy(libc::check).isInstanceOf(NativeLibraryUnavailableException.class);
  }

  private static List<Path> mainSources() throws IOException {
    Path dir = Path.of("src/main/java/io/rdmareactive/rdma/rdmacore");
    if (!Files.isDirectory(dir)) {
      dir = Path.of("rdma-reactive-native").resolve(dir);
    }
    assertThat(dir).isDirectory();
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
  }
}
