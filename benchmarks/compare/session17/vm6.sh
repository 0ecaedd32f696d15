#!/bin/sh
# Same harness (Pong, 8 B busy-poll ping-pong, one JVM) against two library revisions, with the
# idle strategy each revision's benchmark used: backoff (00e2fba's RdmaBench) and spin (since).
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev mode tag
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 $2 5 10000 > $O/pong-$1-$2-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$1-$2-$3.log)" >> $O/info.txt
}
for r in 1 2; do
  pong old backoff $r; pong main backoff $r; pong old spin $r; pong main spin $r
done
cat $O/info.txt
