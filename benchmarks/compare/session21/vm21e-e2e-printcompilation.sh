#!/bin/sh
# guest: EndToEnd --phase rdma-event, old and new warm-up, with -XX:+PrintCompilation: when do the fragment paths compile?
JH=$1; RCP=$2; OUT=$RDMA_VM_OUT
ulimit -l unlimited
for rev in old new; do
  d=$OUT/pc-$rev; mkdir -p $d
  timeout -s QUIT -k 15 420 $JH/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -XX:+PrintCompilation -Djava.awt.headless=true \
    -cp /work/scratch/bench-$rev:$RCP io.rdmareactive.benchmarks.EndToEnd --out $d --phase rdma-event > $d/log.txt 2>&1
  echo "== $rev rc $?"
  # the compilation log's lines in order, the phase's progress lines between them
  grep -n -E "warm-up round|FragmentReceiver::take|Reassembler::append|OutboundSender::postChunks|SendPoster::postFirst|RegisteredSends::gather|throughput 64 KiB|default options|from registered" $d/log.txt | head -40
  grep -h "default options\|from registered memory" $d/figures-*.csv
done
