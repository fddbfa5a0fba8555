#!/usr/bin/env bash
# redis-benchmark against two servers in the same run, interleaved:
#   server/redis-benchmark.sh REDIS_PORT XSTREAM_PORT [ROUNDS]
# Each step runs on the first server, then on the second, ROUNDS times
# (default 3), so that a change in the machine's load falls on both. Both
# are flushed first; the XADD steps fill the stream (1.1M entries a round),
# XRANGE reads it, then two groups consume it with XREADGROUP COUNT 10.
# Prints requests per second for each run and, per step, the median of
# each server and their ratio (second / first).
set -u
A=$1 B=$2 R=${3:-3}
V="sensor-id 1234 temperature 19.8"
for port in $A $B; do
  echo "== port $port: $(redis-cli -p $port info server | grep -E 'redis_version|xstream_server' | tr -d '\r' | tr '\n' ' ')"
  redis-cli -p $port flushall >/dev/null
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
step() { # name, args...
  local name=$1; shift
  local ra=() rb=()
  for r in $(seq "$R"); do
    for port in $A $B; do
      rps=$(redis-benchmark -p $port -q -c 50 "$@" 2>/dev/null | tr '\r' '\n' | grep "requests per second" | tail -1 | sed 's/.*: \([0-9.]*\) requests per second.*/\1/')
      if [ $port = $A ]; then ra+=("$rps"); else rb+=("$rps"); fi
    done
  done
  ma=$(printf '%s\n' "${ra[@]}" | median); mb=$(printf '%s\n' "${rb[@]}" | median)
  printf '%-28s %s: %s (median %.0f) | %s: %s (median %.0f) | ratio %.2f\n' "$name" $A "${ra[*]}" "$ma" $B "${rb[*]}" "$mb" "$(echo "$mb / $ma" | bc -l)"
}
step "XADD -P 32" -n 1000000 -P 32 XADD bench '*' $V
step "XADD" -n 100000 XADD bench '*' $V
step "XRANGE COUNT 10 -P 32" -n 1000000 -P 32 XRANGE bench - + COUNT 10
step "XRANGE COUNT 10" -n 100000 XRANGE bench - + COUNT 10
for port in $A $B; do
  redis-cli -p $port XGROUP CREATE bench g1 0 >/dev/null
  redis-cli -p $port XGROUP CREATE bench g2 0 >/dev/null
done
step "XREADGROUP COUNT 10 -P 32" -n 100000 -P 32 XREADGROUP GROUP g1 c COUNT 10 STREAMS bench '>'
step "XREADGROUP COUNT 10" -n 100000 XREADGROUP GROUP g2 c COUNT 10 STREAMS bench '>'
for port in $A $B; do
  echo "port $port: pending g1 $(redis-cli -p $port xpending bench g1 | head -1), g2 $(redis-cli -p $port xpending bench g2 | head -1), length $(redis-cli -p $port xlen bench)"
done
