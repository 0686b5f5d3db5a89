#!/bin/bash
# Does the agent's memory stay flat over a long run with processes coming
# and going (BENCHMARKS.md, "Agent soak")?  `dwarfsample agent -a` at RATE
# Hz for MINUTES on a host kept busy by process churn: a new process about
# every 0.3 s, each one of COPIES copies of the demo workload that differ
# only in their build-id (so each is a file of its own to the agent's
# caches, as the binaries of a deploy or of many containers are), and
# between them short runs of sh, python3, perl and gzip.  Its RSS is read
# every 10 s; after WARMUP_S (300 s: the cache fills up to its limit
# first) the slope is fitted by least squares and printed in MiB per hour,
# with the agent's last health line (cache files, bytes, evictions).
# usage: agent-soak.sh DWARFSAMPLE DEMO [MINUTES [RATE [CACHE [COPIES]]]]
set -u
ds=$1
demo=$2
minutes=${3:-10}
rate=${4:-99}
cache=${5:-256M}
copies=${6:-64}
# Until the cache has filled up to its limit with the host's files.
warmup=${WARMUP_S:-300}
tmp=$(mktemp -d)
churn=
agent=
trap 'kill $churn $agent 2>/dev/null; rm -rf "$tmp"' EXIT

# The copies: the build-id's first four bytes replaced by a counter.
id=$(readelf -n "$demo" | awk '/Build ID/ { print $3 }')
python3 - "$demo" "$id" "$tmp" "$copies" <<'EOF'
import sys, os, struct
src, hexid, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
image = bytearray(open(src, 'rb').read())
at = image.find(bytes.fromhex(hexid))
assert at >= 0, "build-id not found in the file"
for i in range(n):
    image[at:at + 4] = struct.pack('<I', i)
    path = os.path.join(out, 'demo-%03d' % i)
    open(path, 'wb').write(image)
    os.chmod(path, 0o755)
EOF

(
	i=0
	while :; do
		"$tmp/demo-$(printf %03d $((i % copies)))" 0.3 1 >/dev/null
		case $((i % 8)) in
		1) sh -c 'for f in /usr/lib/*; do :; done' ;;
		3) python3 -c 'sum(x * x for x in range(300000))' ;;
		5) perl -e '$s = 0; $s += $_ for 1 .. 300000' ;;
		7) gzip -c "$demo" >/dev/null ;;
		esac
		i=$((i + 1))
		echo $i >"$tmp/churned"
	done
) &
churn=$!

"$ds" agent -a -F "$rate" --interval 15s --out-dir "$tmp/out" --out-dir-size 64M \
	--spool-dir "$tmp/spool" --cache-size "$cache" --health-interval 60s 2>"$tmp/log" &
agent=$!
echo "agent -a -F $rate --cache-size $cache, $minutes min, $copies copies of the demo churned"
printf '%6s %10s\n' "t (s)" "RSS (KiB)"
: >"$tmp/rss"
for ((t = 0; t <= minutes * 60; t += 10)); do
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$agent/status" 2>/dev/null)
	[ -n "$rss" ] || { echo "the agent exited:"; cat "$tmp/log"; exit 1; }
	echo "$t $rss" >>"$tmp/rss"
	printf '%6d %10d\n' "$t" "$rss"
	sleep 10
done
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$agent/status")
kill -TERM $agent
wait $agent
kill $churn 2>/dev/null
wait $churn 2>/dev/null
churn=
agent=
awk -v w="$warmup" -v hwm="$hwm" '
	$1 >= w { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2
		  if (!min || $2 < min) min = $2; if ($2 > max) max = $2 }
	END {
		b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
		printf "after %d s: RSS %.1f..%.1f MiB, peak %.1f MiB; slope %+.2f MiB/hour (%d points)\n",
			w, min / 1024, max / 1024, hwm / 1024, b * 3600 / 1024, n
	}' "$tmp/rss"
grep 'health:' "$tmp/log" | tail -1 | sed 's/.*health: /last health: /'
echo "programs churned: $(cat "$tmp/churned") (and their children)"
