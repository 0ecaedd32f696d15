package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.spi.RdmaProvider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/** The {@code rdma} health indicator, where Boot's health support is present ({@code management.health.rdma.enabled}). */
@AutoConfiguration(after = RdmaAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, RdmaProvider.class})
@ConditionalOnBean(RdmaProvider.class)
@ConditionalOnEnabledHealthIndicator("rdma")
public class RdmaHealthContributorAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean(name = "rdmaHealthIndicator")
  RdmaHealthIndicator rdmaHealthIndicator(RdmaProvider provider, RdmaProperties properties,
      ObjectProvider<RdmaServerLifecycle> server) {
    return new RdmaHealthIndicator(provider, properties.getDevice(), server.getIfAvailable());
  }
}
