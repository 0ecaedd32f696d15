#!/bin/sh
# guest: EndToEnd --phase rdma-busy-poll with the old and the new warm-up, alternating
JH=$1; RCP=$2; OUT=$RDMA_VM_OUT
ulimit -l unlimited
n=0
for rev in old new old new; do
  n=$((n+1)); d=$OUT/run$n-$rev; mkdir -p $d
  t0=$(date +%s)
  timeout -s QUIT -k 15 420 $JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Djava.awt.headless=true \
    -cp /work/scratch/bench-$rev:$RCP io.rdmareactive.benchmarks.EndToEnd --out $d --phase rdma-busy-poll > $d/log.txt 2>&1
  echo "run $n $rev rc $? in $(( $(date +%s) - t0 )) s"
  grep -h "warm-up round" $d/log.txt | tail -1
  cat $d/figures-*.csv 2>/dev/null | grep -E "throughput|message rate|latency p50" | sed "s/^/$rev,/"
done
