#!/bin/sh
# Session 18, a quiet host: the same harness (Pong, 8 B busy-poll spin ping-pong, one JVM) over four revisions, alternating, 4 passes.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev mode tag
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 $2 5 10000 > $O/pong-$1-$2-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$1-$2-$3.log) $(date +%T)" >> $O/info.txt
}
for r in 1 2 3 4; do
  pong old spin $r; pong main spin $r; pong c51e390 spin $r; pong f9cd99b spin $r
done
cat $O/info.txt
