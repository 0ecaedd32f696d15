package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.ApiDocs;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every public declaration of the native provider has Javadoc (see {@link ApiDocs}). */
class ApiDocsTest {
  @Test
  void everyPublicDeclarationIsDocumented() {
    assertThat(ApiDocs.undocumented(Path.of("src/main/java"), List.of("io.rdmareactive.rdma.rdmacore")))
        .as("undocumented public declarations").isEmpty();
  }
}
