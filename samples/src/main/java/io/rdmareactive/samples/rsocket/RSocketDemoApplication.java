package io.rdmareactive.samples.rsocket;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An RSocket service as Spring teams write it ({@link GreetingController}), configured by
 * {@code application-rsocket-demo.properties}: over TCP by default, over RDMA with
 * {@code rdma.rsocket.server.enabled=true}.
 */
@SpringBootApplication
public class RSocketDemoApplication {
  public static final String PROFILE = "rsocket-demo";

  public static void main(String[] args) {
    application().run(args);
  }

  /** The application, with its profile (and so its properties file). */
  public static SpringApplication application() {
    SpringApplication app = new SpringApplication(RSocketDemoApplication.class);
    app.setAdditionalProfiles(PROFILE);
    app.setMainApplicationClass(RSocketDemoApplication.class);
    return app;
  }
}
