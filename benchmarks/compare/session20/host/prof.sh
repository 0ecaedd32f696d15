#!/bin/bash
# JFR (1 ms samples) of Pong1 for build $1 (10 x 1,000,000 round trips); text in /tmp/one-$1.txt
cd /work/ping/pb; J=/usr/lib/jvm/temurin-25-jdk-amd64/bin; r=$1
timeout 300 taskset -c 1 $J/java --enable-native-access=ALL-UNNAMED "-XX:StartFlightRecording:filename=/tmp/one-$r.jfr,settings=profile,jdk.ExecutionSample#period=1ms" -cp o-$r:$(cat cp-$r.txt) Pong1 in-memory 127.0.0.1 one 10 1000000 > /tmp/jfr-$r.log 2>&1
grep RESULT /tmp/jfr-$r.log
$J/jfr print --events jdk.ExecutionSample --stack-depth 64 /tmp/one-$r.jfr > /tmp/one-$r.txt
