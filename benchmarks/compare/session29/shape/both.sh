#!/bin/sh
sh /work/ping24/vm29/rr.sh $1 > /dev/null
RUNS=3 sh /work/ping24/vm29/jm.sh $1
