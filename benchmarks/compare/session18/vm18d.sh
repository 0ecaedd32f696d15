#!/bin/sh
# Session 18, boot 4: 00e2fba against main, with each trial's p10 and p1 as well (the fast path, less exposed to the guest's scheduling), and main with a critical post_send.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev tag label [jvm args] [cp prefix]
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $4 -cp $5/work/ping/pb/c2-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$3-$2.log 2>&1
  echo "pong $3 $2 $(grep RESULT $O/pong-$3-$2.log) $(date +%T)" >> $O/info.txt
}
for r in 1 2 3 4; do
  pong old $r old; pong main $r main; pong main $r main-crit -Dpong.critical=true /work/ping/pb/c-main-crit:
done
cat $O/info.txt
