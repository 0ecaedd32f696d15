#!/bin/sh
# Session 18, boot 5: what each revision puts on the wire per round trip: rxe0's hw counters around each run, the client's RdmaStatistics, each trial's p10 and p1.
J=$1/bin/java
O=$RDMA_VM_OUT
hw() { for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do printf '%s=%s ' "$(basename $f)" "$(cat $f)"; done; echo; }
pong() { # rev tag
  echo "before $1 $2 $(hw)" >> $O/hw.txt
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c3-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "after $1 $2 $(hw)" >> $O/hw.txt
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log) $(date +%T)" >> $O/info.txt
}
for r in 1; do
  pong old $r; pong main $r; pong 2a997c4 $r; pong 3576d35 $r; pong c005d2a $r; pong def3630 $r
done
cat $O/info.txt
