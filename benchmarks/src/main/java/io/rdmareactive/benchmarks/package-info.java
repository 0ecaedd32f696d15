/** JMH microbenchmarks and the end-to-end harness (this library vs perftest vs Reactor Netty TCP). */
@NullMarked
package io.rdmareactive.benchmarks;

import org.jspecify.annotations.NullMarked;
