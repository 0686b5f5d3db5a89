// A JIT's hot functions whose work ends right before the process exits
// (test-jit-maps.sh): a fixed amount of work, so that every run takes the
// same CPU time however the machine schedules it.  usage: node [flags]
// jit-workload.js ROUNDS
'use strict';
function jitLeaf(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s + i * 7) % 1000003;
	return s;
}
function jitMiddle(n) {
	let t = 0;
	for (let i = 0; i < 50; i++)
		t += jitLeaf(n);
	return t;
}
function jitOuter(rounds) {
	let t = 0;
	for (let r = 0; r < rounds; r++)
		t += jitMiddle(2000);
	return t;
}
jitOuter(Number(process.argv[2] || 600));
