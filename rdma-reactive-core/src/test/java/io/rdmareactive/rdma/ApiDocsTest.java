package io.rdmareactive.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.ApiDocs;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every public declaration of core's API packages has Javadoc (see {@link ApiDocs}). */
class ApiDocsTest {
  @Test
  void everyPublicDeclarationOfTheApiPackagesIsDocumented() {
    assertThat(ApiDocs.undocumented(Path.of("src/main/java"), List.of("io.rdmareactive.rdma",
        "io.rdmareactive.rdma.transport", "io.rdmareactive.rdma.verbs", "io.rdmareactive.rdma.spi",
        "io.rdmareactive.rdma.inmemory"))).as("undocumented public declarations").isEmpty();
  }
}
