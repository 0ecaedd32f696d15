#!/bin/sh
# Session 28: what C2 inlines into the list post (ListPost.post) and the lone post, from PrintInlining, in a PongAB LONE run.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+UnlockDiagnosticVMOptions \
  -XX:+PrintCompilation -XX:+PrintInlining -Dab.class=io.rdmareactive.rdma.rdmacore.NativeQueuePair -Dab.field=LONE \
  -cp $P/o-ab3:$(cat $P/cp-ab3.txt) PongAB native 10.0.0.1 spin 12 10000 > $O/inl.log 2>&1
grep -E "RESULT|^trial .* p50" $O/inl.log > $O/info.txt
