#!/bin/sh
# Session 18, boot 7 (boot 6 again, 3 more passes, without ae42296): h20a (coalescing) alone, on its base 19b94f5 without h20b, against both merges.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev tag
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c3-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log) $(date +%T)" >> $O/info.txt
}
for r in 3 4 5; do
  pong 19b94f5 $r; pong db30269 $r; pong def3630 $r; pong 22ef9d6 $r
done
cat $O/info.txt
