// SPDX-License-Identifier: Apache-2.0

// The toolchain matrix's Go workload: work.c in Go.  main -> recurse DEPTH
// frames deep -> spin, which loops for the CPU seconds given, calling mix
// (inlined) and tclib.Step, a function of a second package standing in
// for the shared library (a call through cgo would leave Go's stack).
package main

import (
	"os"
	"strconv"
	"syscall"

	"work/tclib"
)

const depth = 41

var sink uint64

func mix(x uint64) uint64 {
	x ^= x >> 31
	x *= 0x9e3779b97f4a7c15
	return x ^ (x >> 29)
}

// The process's CPU time: however loaded the machine, a run is about as
// many samples.  It is read once per 20000 steps.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

//go:noinline
func spin(seconds float64) uint64 {
	end := cpuSeconds() + seconds
	x := uint64(1)
	for {
		for i := 0; i < 20000; i++ {
			x = tclib.Step(mix(x))
		}
		if cpuSeconds() >= end {
			return x
		}
	}
}

// The store after the call keeps it from being a tail call.
//
//go:noinline
func recurse(d int, seconds float64) uint64 {
	var r uint64
	if d > 1 {
		r = recurse(d-1, seconds)
	} else {
		r = spin(seconds)
	}
	sink = r
	return r ^ uint64(d)
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		seconds, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	recurse(depth, seconds)
}
