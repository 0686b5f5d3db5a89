// SPDX-License-Identifier: Apache-2.0
// The toolchain matrix's Rust workload: work.c in Rust.  main -> recurse
// DEPTH frames deep -> spin, which loops for the CPU seconds given, calling
// helpers::mix (inlined: a frame in a module) and tc_lib_step of the C
// shared library (tclib.c), linked as any native library.
const DEPTH: u32 = 41;

// CLOCKS_PER_SEC, which POSIX makes a million.
const CLOCKS_PER_SEC: f64 = 1e6;

extern "C" {
    fn tc_lib_step(x: u64) -> u64;
    fn clock() -> i64;
}

mod helpers {
    #[inline(always)]
    pub fn mix(mut x: u64) -> u64 {
        x ^= x >> 31;
        x = x.wrapping_mul(0x9e3779b97f4a7c15);
        x ^ (x >> 29)
    }
}

static mut SINK: u64 = 0;

// CPU time, as in work.c (the C library's, which Rust's does not have),
// read once per 20000 steps.
#[inline(never)]
fn spin(seconds: f64) -> u64 {
    let end = unsafe { clock() } + (seconds * CLOCKS_PER_SEC) as i64;
    let mut x: u64 = 1;
    loop {
        for _ in 0..20000 {
            x = unsafe { tc_lib_step(helpers::mix(x)) };
        }
        if unsafe { clock() } >= end {
            return x;
        }
    }
}

// The store after the call keeps it from being a tail call.
#[inline(never)]
fn recurse(depth: u32, seconds: f64) -> u64 {
    let r = if depth > 1 {
        recurse(depth - 1, seconds)
    } else {
        spin(seconds)
    };
    unsafe { std::ptr::write_volatile(std::ptr::addr_of_mut!(SINK), r) };
    r ^ depth as u64
}

fn main() {
    let seconds = std::env::args().nth(1).map_or(1.0, |s| s.parse().unwrap());
    recurse(DEPTH, seconds);
}
