// SPDX-License-Identifier: Apache-2.0
// The Rust workload of test-inline-names.sh: a recursion in a module, an
// #[inline(always)] helper in a module inside it, closures and the
// standard library's sort (generic code inlined from std), built with
// legacy and with v0 symbol mangling.
// usage: names-rust ROUNDS
mod work {
    pub mod inner {
        #[inline(always)]
        pub fn mix(x: u64) -> u64 {
            let mut h = x;
            for i in 0..64u64 {
                h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7) ^ i;
            }
            h
        }
    }

    #[inline(never)]
    pub fn recurse(depth: u32, x: u64) -> u64 {
        if depth == 0 {
            return inner::mix(x);
        }
        let mut v: Vec<u64> = (0..16).map(|i| x ^ i).collect();
        v.sort_by(|a, b| b.cmp(a));
        recurse(depth - 1, v[3]).wrapping_add(1)
    }
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let mut t = 0u64;
    for _ in 0..rounds {
        t = t.wrapping_add(work::recurse(8, t));
    }
    println!("{}", t & 1);
}
