/**
 * Entry points of rdma-reactive: {@link io.rdmareactive.rdma.device.RdmaDevices}, provider selection and
 * the exception hierarchy rooted at {@link io.rdmareactive.rdma.RdmaException}.
 */
@NullMarked
package io.rdmareactive.rdma;

import org.jspecify.annotations.NullMarked;
