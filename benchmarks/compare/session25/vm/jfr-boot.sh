#!/bin/sh
# Pong1 native spin (thread-per-connection busy loops), C2-only; timing runs, then JFR runs (1 ms samples)
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
pong() { # rev tag flags...
  r=$1; t=$2; shift 2
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 "$@" -cp $P/o-$r:$(cat $P/cp-$r.txt) \
    Pong1 native 10.0.0.1 spin 5 ${ITERS:-10000} > $O/pong-$r-$t.log 2>&1
  echo "pong $r $t $(grep RESULT $O/pong-$r-$t.log) $(grep -h 'trial . p50' $O/pong-$r-$t.log | awk '{print $5}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for p in 1 2; do for r in ${REVS:-new old opt1}; do pong $r t$p; done; done
for r in ${REVS:-new old opt1}; do
  pong $r jfr -XX:StartFlightRecording=filename=$O/$r.jfr,settings=/work/ping24/vm/prof.jfc
done
cat $O/info.txt
