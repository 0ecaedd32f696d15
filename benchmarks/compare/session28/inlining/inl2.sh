#!/bin/sh
# Session 28: C2's inlining in the isolated ping-pong, 19b94f5 (old) against 772e6f5 (lone): Pong1 native busy-poll with
# PrintInlining, two JVMs each; how many inlining decisions in rdma-reactive code hit NodeCountInliningCutoff.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
for pass in 1 2; do for r in old lone; do
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+UnlockDiagnosticVMOptions \
    -XX:+PrintCompilation -XX:+PrintInlining -cp $P/o-$r:$(cat $P/cp-$r.txt) Pong1 native 10.0.0.1 spin 5 10000 > $O/inl-$r-$pass.log 2>&1
  echo "$r-$pass cutoffs $(grep -a 'io.rdmareactive' $O/inl-$r-$pass.log | grep -ac NodeCountInliningCutoff) toobig $(grep -a 'io.rdmareactive' $O/inl-$r-$pass.log | grep -ac 'too big') $(grep -a RESULT $O/inl-$r-$pass.log)" >> $O/info.txt
done; done
cat $O/info.txt
