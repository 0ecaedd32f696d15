package io.rdmareactive.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link RdmaMetrics} where Micrometer is present: a {@link io.micrometer.core.instrument.binder.MeterBinder}
 * (Boot's metrics support binds it to every registry) that observes every connection; and
 * {@link RdmaLoopMetrics}, the memory the loops' connections share.
 */
@AutoConfiguration(before = RdmaAutoConfiguration.class)
@ConditionalOnClass({MeterRegistry.class, io.rdmareactive.rdma.transport.RdmaServer.class})
@EnableConfigurationProperties(RdmaProperties.class)
public class RdmaMetricsAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  RdmaMetrics rdmaMetrics(RdmaProperties properties) {
    Set<String> endpoints = new LinkedHashSet<>();
    if (properties.getServer().isEnabled()) {
      endpoints.add("server");
    }
    endpoints.addAll(properties.getClients().keySet());
    return new RdmaMetrics(endpoints);
  }

  @Bean
  @ConditionalOnMissingBean
  RdmaLoopMetrics rdmaLoopMetrics(ObjectProvider<io.rdmareactive.rdma.transport.RdmaLoopResources> loops) {
    return new RdmaLoopMetrics(loops::getIfAvailable);
  }
}
