#!/bin/sh
# s26 (HEAD) vs y (data-sent spin rule): streams then 8 B latency, alternating JVMs, event mode
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
drv() {
  m=$1; v=$2; shift 2
  timeout 600 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation "$@" -cp $P/drv/o:$(cat $P/cp-$v.txt) \
    io.rdmareactive.benchmarks.Drv $m 10.0.0.1 $O ${ROUNDS:-3} ${COUNT:-2000} > $O/drv-$m-$v-$$.log 2>&1
  grep -E "^(RES|JFR)" $O/drv-$m-$v-$$.log | sed "s/^/$v /" >> $O/info.txt
  echo "$v $m done $(date +%T)" >> $O/info.txt
}
for v in s26 y; do drv ev $v; done
for v in s26 y s26 y; do drv lat $v; done
cat $O/info.txt
