#!/bin/sh
# 64 KiB streams: plain/defaults/registered (event) and RSocket plain/registered, timed rounds then JFR
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
bw() {
  ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -F > $O/bw-s.log 2>&1 &
  sleep 2; ib_send_bw -d rxe0 -x 1 -s 65536 -n 3333 -F 10.0.0.1 > $O/bw-c.log 2>&1; wait
  echo "ib_send_bw $1 $(grep -A1 'BW average' $O/bw-c.log | tail -1)" >> $O/info.txt
}
drv() {
  m=$1; shift
  timeout 900 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp $P/drv/o:$(cat $P/cp-${CP:-s26}.txt) \
    io.rdmareactive.benchmarks.Drv $m 10.0.0.1 $O ${ROUNDS:-3} ${COUNT:-2000} > $O/drv-$m.log 2>&1
  grep -E "^(RES|JFR)" $O/drv-$m.log >> $O/info.txt
}
bw 1
for m in ${MODES:-ev rs}; do drv $m; bw after-$m; done
cat $O/info.txt
