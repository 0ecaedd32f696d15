/**
 * Where applications start with verbs: {@link io.rdmareactive.rdma.device.RdmaDevices} lists the
 * devices of the selected provider (native or in-memory) and opens them. It sits above the provider
 * SPI, which the root package's exceptions sit below, so the packages form no cycle.
 */
@NullMarked
package io.rdmareactive.rdma.device;

import io.rdmareactive.rdma.device.RdmaDevices;
import org.jspecify.annotations.NullMarked;
