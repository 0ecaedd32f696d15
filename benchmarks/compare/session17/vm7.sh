#!/bin/sh
# Same harness (Pong, 8 B ping-pong, spin) over library revisions 00e2fba .. main, one boot, two passes.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev pass
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log)" >> $O/info.txt
}
for p in 1 2; do
  for r in old c51e390 f9cd99b 400f03d 831960f 0ef19c7 main; do pong $r $p; done
done
cat $O/info.txt
