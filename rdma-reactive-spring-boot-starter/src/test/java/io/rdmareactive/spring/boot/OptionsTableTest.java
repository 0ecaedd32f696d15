package io.rdmareactive.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.RdmaOption;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/options.md holds the one table of options; this keeps it true. Its rows must be exactly
 * {@link RdmaOption}'s public constants, each with the constant's type, range and default, and
 * its Boot properties exactly the starter's properties named after the option (from the
 * configuration metadata the build generates, and for the map of named clients from
 * {@link RdmaProperties.Client}'s setters).
 */
class OptionsTableTest {
  private static final Path TABLE = Path.of("..", "docs", "options.md");
  private static final String CLIENTS = "rdma.clients.<name>.";

  record Row(String name, String type, String range, String defaultValue, Set<String> properties) {}

  @Test
  void theTableListsEveryOptionWithItsTypeRangeAndDefault() throws Exception {
    Map<String, Row> rows = table();
    Map<String, RdmaOption<?>> options = options();
    assertThat(rows.keySet()).as("options in docs/options.md against RdmaOption's constants")
        .containsExactlyInAnyOrderElementsOf(options.keySet());
    for (RdmaOption<?> option : options.values()) {
      Row row = rows.get(option.name());
      assertThat(row.type()).as("type of %s", option).isEqualTo(typeOf(option));
      assertThat(row.range()).as("range of %s", option).isEqualTo(rangeOf(option));
      assertThat(parse(row.defaultValue(), option.defaultValue().getClass())).as("default of %s", option)
          .isEqualTo(option.defaultValue());
    }
  }

  @Test
  void theTableNamesEveryBootPropertyOfEachOptionAndNoOther() throws Exception {
    Map<String, Row> rows = table();
    Set<String> properties = new TreeSet<>(metadataProperties());
    for (RdmaOption<?> option : RdmaOption.values()) {
      if (RdmaOptionBinder.bound(option, false)) {
        properties.add(CLIENTS + RdmaOptionBinder.property(option)); // bound by name: no metadata entry
      }
    }
    for (Row row : rows.values()) {
      String key = row.name().toLowerCase(Locale.ROOT).replace('_', '-');
      Set<String> named = new TreeSet<>();
      for (String p : properties) {
        if (p.substring(p.lastIndexOf('.') + 1).equals(key)) {
          named.add(p);
        }
      }
      assertThat(row.properties()).as("Boot properties of %s in docs/options.md against the starter's", row.name())
          .containsExactlyInAnyOrderElementsOf(named);
    }
  }

  private static Map<String, RdmaOption<?>> options() throws IllegalAccessException {
    Map<String, RdmaOption<?>> options = new LinkedHashMap<>();
    for (Field f : RdmaOption.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == RdmaOption.class) {
        RdmaOption<?> o = (RdmaOption<?>) f.get(null);
        options.put(o.name(), o);
      }
    }
    return options;
  }

  /** The simple name of the option's value type, from its constant's declared type argument. */
  private static String typeOf(RdmaOption<?> option) throws NoSuchFieldException {
    ParameterizedType t = (ParameterizedType) RdmaOption.class.getField(option.name()).getGenericType();
    return ((Class<?>) t.getActualTypeArguments()[0]).getSimpleName();
  }

  /** The range the option's own validation error states (RdmaOption keeps it for that message). */
  private static String rangeOf(RdmaOption<?> option) throws ReflectiveOperationException {
    return option.range();
  }

  private static Object parse(String text, Class<?> type) {
    if (type == Integer.class) {
      return Integer.valueOf(text);
    }
    if (type == Long.class) {
      return Long.valueOf(text);
    }
    if (type == Boolean.class) {
      return Boolean.valueOf(text);
    }
    if (type == Duration.class) {
      Matcher m = Pattern.compile("(\\d+)(ms|s|m|h|d)?").matcher(text);
      assertThat(m.matches()).as("a duration as Boot writes it: %s", text).isTrue();
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2) == null ? "ms" : m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    return text;
  }

  /** The rows of the table after the {@code <!-- options:table -->} mark. */
  private static Map<String, Row> table() throws IOException {
    List<String> lines = Files.readAllLines(TABLE);
    int start = lines.indexOf("<!-- options:table -->");
    assertThat(start).as("the options:table mark in %s", TABLE).isNotNegative();
    Map<String, Row> rows = new LinkedHashMap<>();
    for (String line : lines.subList(start + 3, lines.size())) {
      if (!line.startsWith("|")) {
        break;
      }
      String[] cells = line.substring(1, line.length() - 1).split(" \\| ", -1);
      assertThat(cells).as("cells of %s", line).hasSize(6);
      Set<String> props = new TreeSet<>();
      for (String p : cells[4].split(",")) {
        props.add(p.strip().replace("`", ""));
      }
      props.remove("(none)");
      String name = cells[0].strip().replace("`", "");
      assertThat(rows.put(name, new Row(name, cells[1].strip(), cells[2].strip(), cells[3].strip(), props)))
          .as("%s listed once", name).isNull();
    }
    return rows;
  }

  /** Property names in the metadata the configuration processor generated for the starter. */
  private static List<String> metadataProperties() throws IOException {
    String json;
    try (InputStream in = RdmaProperties.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the starter's generated configuration metadata").isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    int from = json.indexOf("\"properties\"");
    assertThat(from).isNotNegative();
    String properties = json.substring(json.indexOf('[', from), json.indexOf(']', from) + 1);
    List<String> names = new ArrayList<>();
    Matcher m = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"").matcher(properties);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** Kebab-case names of the bean properties a named client binds (its setters). */

}
