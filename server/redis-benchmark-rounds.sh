#!/usr/bin/env bash
# Unpipelined rounds of one command against several servers, for ratios
# finer than redis-benchmark.sh's three rounds resolve:
#   server/redis-benchmark-rounds.sh ROUNDS XADD|XRANGE PORT...
# Each round runs redis-benchmark -c 50 -n 100000 once on every server,
# the order rotating from round to round, and prints each server's
# requests/s and its ratio to the first port's in that round. At the end,
# each server's median requests/s, the median and mean of its per-round
# ratios, and in how many rounds it was ahead of the first. XRANGE reads
# bench - + COUNT 10; a stream of fewer than 100 entries is filled first.
set -u
R=$1 C=$2; shift 2; P=("$@")
V="sensor-id 1234 temperature 19.8"
case $C in
XADD) args=(XADD bench '*' $V) ;;
XRANGE) args=(XRANGE bench - + COUNT 10) ;;
*) echo "command: XADD or XRANGE" >&2; exit 2 ;;
esac
for port in "${P[@]}"; do
  if [ "$(redis-cli -p $port xlen bench)" -lt 100 ]; then
    for i in $(seq 100); do redis-cli -p $port xadd bench '*' $V >/dev/null; done
  fi
done
declare -A rps
for r in $(seq $R); do
  n=${#P[@]}
  for i in $(seq 0 $((n-1))); do
    port=${P[$(( (i + r) % n ))]}
    rps[$r,$port]=$(redis-benchmark -p $port -q -c 50 -n 100000 "${args[@]}" 2>/dev/null | tr '\r' '\n' | grep "requests per second" | tail -1 | sed 's/.*: \([0-9.]*\) requests per second.*/\1/')
  done
  line="round $r, load $(cut -d' ' -f1 /proc/loadavg):"
  for port in "${P[@]}"; do
    line="$line $port=${rps[$r,$port]} ($(echo "${rps[$r,$port]} / ${rps[$r,${P[0]}]}" | bc -l | cut -c1-5))"
  done
  echo "$line"
done
for port in "${P[@]}"; do
  for r in $(seq $R); do echo "${rps[$r,$port]} $(echo "${rps[$r,$port]} / ${rps[$r,${P[0]}]}" | bc -l)"; done |
    awk -v c=$C -v p=$port -v first=${P[0]} '
      {v[NR]=$1; q[NR]=$2; s+=$2; if ($2>1) a++}
      function med(x, n,  i, j, t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (x[j]<x[i]) {t=x[i]; x[i]=x[j]; x[j]=t}
        return (n%2) ? x[(n+1)/2] : (x[n/2]+x[n/2+1])/2 }
      END {printf "%s %s: median %.0f/s, ratio to %s median %.3f mean %.3f, ahead in %d of %d rounds\n", c, p, med(v, NR), first, med(q, NR), s/NR, a, NR}'
done
