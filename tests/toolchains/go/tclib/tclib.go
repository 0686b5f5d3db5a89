// SPDX-License-Identifier: Apache-2.0

// Package tclib is tclib.c in Go: a function of another package for the
// workload's bottom loop to call.
package tclib

// Step is a few hundred cycles of arithmetic on x.
//
//go:noinline
func Step(x uint64) uint64 {
	for i := uint64(0); i < 64; i++ {
		x = (x<<7|x>>57)*0x100000001b3 + i
	}
	return x
}
