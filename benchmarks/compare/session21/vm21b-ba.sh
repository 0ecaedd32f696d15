#!/bin/sh
# guest: before/after (core jar swapped) on the 64 KiB rows, alternating JVMs; ib_send_bw between
# As run in session 21: /work/scratch/jars/core-82c286d.jar was 82c286d's core jar, core-v5.jar the core jar of
# the v5 tree (1cd13a7's code, built before it was committed); BASECP is benchmarks/target/runtime-classpath.txt
# with the directory of Big.class (session21/Big.java.txt) and benchmarks/target/classes first.
JH=$1; BASECP=$2; ROUNDS=${3:-3}
ulimit -l unlimited
pt() {
  port=$1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F > /tmp/s.$port 2>&1 &
  sleep 1
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -p $port -F 10.0.0.1 2>&1 | grep -E '^ *65536' | sed 's/^/PERFTEST /'
  wait
}
port=19100
for r in $(seq 1 $ROUNDS); do
  for rev in 82c286d v5; do
    CP=$(echo "$BASECP" | sed "s#/work/main/rdma-reactive-core/target/rdma-reactive-core-0.1.0-SNAPSHOT.jar#/work/scratch/jars/core-$rev.jar#")
    $JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp "$CP" io.rdmareactive.benchmarks.Big rows event 1000 3 $rev 2>&1 | grep ROW
  done
  port=$((port+1)); pt $port
done
