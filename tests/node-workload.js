// SPDX-License-Identifier: Apache-2.0
// A JavaScript workload for the jitdump tests (node --perf-prof): three
// functions the JIT compiles, each calling the next, busy for the number
// of milliseconds given, then done right away (node writes its jitdump
// out as it exits).  `depth` recurses so its frames are never all inlined.
'use strict';

function jsLeaf(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s + i * i) % 1000003;
	return s;
}

function jsDepth(d, n) {
	return d > 0 ? jsDepth(d - 1, n) + 1 : jsLeaf(n);
}

function jsOuter(n) {
	let t = 0;
	for (let k = 0; k < 20; k++)
		t += jsDepth(3, n);
	return t;
}

const end = Date.now() + Number(process.argv[2] || 3000);
let r = 0;
while (Date.now() < end)
	r += jsOuter(20000);
if (r < 0)
	console.log(r);
