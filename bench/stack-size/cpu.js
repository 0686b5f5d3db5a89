const end = Date.now() + 1000 * Number(process.argv[2]);
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let sink = 0;
while (Date.now() < end) {
  const a = [];
  for (let i = 0; i < 20000; i++) a.push((i * 2654435761) % 1000003);
  a.sort((x, y) => x - y);
  const m = new Map();
  for (let i = 0; i < 20000; i++) m.set('k' + (a[i] % 5000), i);
  sink += fib(20) + m.size + JSON.stringify(a.slice(0, 100)).length;
}
console.log(sink);
