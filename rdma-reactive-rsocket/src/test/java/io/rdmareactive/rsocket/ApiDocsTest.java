package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.ApiDocs;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every public declaration of the RSocket transport's packages has Javadoc (see {@link ApiDocs}). */
class ApiDocsTest {
  @Test
  void everyPublicDeclarationIsDocumented() {
    assertThat(ApiDocs.undocumented(Path.of("src/main/java"),
        List.of("io.rdmareactive.rsocket", "io.rdmareactive.rsocket.boot")))
        .as("undocumented public declarations").isEmpty();
  }
}
