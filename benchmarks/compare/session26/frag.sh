#!/bin/sh
# 64 KiB stream, 64 KiB buffers vs default options (4 fragments), reassembly variants: as is / reused array / reused array and no copy
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
  m=$1; v=$2; shift 2
  timeout 600 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation "$@" -cp $P/drv/o:$(cat $P/cp-r.txt) \
    io.rdmareactive.benchmarks.Drv $m 10.0.0.1 $O ${ROUNDS:-4} ${COUNT:-2000} > $O/drv-$m-$v.log 2>&1
  grep -E "^(RES|JFR)" $O/drv-$m-$v.log | sed "s/^/$m $v /" >> $O/info.txt
}
bw 1
for m in frag-busy frag; do
  drv $m base
  drv $m reuse -Drr.reuse=true
  drv $m nocopy -Drr.reuse=true -Drr.nocopy=true
  bw after-$m
done
cat $O/info.txt
