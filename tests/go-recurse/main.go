// A goroutine recursing exactly depth deep through rec, which the compiler
// must not inline, to spin in a leaf without a frame of its own
// (test-unwind-go.sh).
package main

import "fmt"

const depth = 41

//go:noinline
func spin(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + uint64(i)
	}
	return x
}

//go:noinline
func rec(d int) uint64 {
	if d == 1 {
		return spin(1000000)
	}
	return rec(d-1) + 1
}

func main() {
	done := make(chan uint64)
	go func() {
		var s uint64
		for i := 0; i < 600; i++ {
			s += rec(depth)
		}
		done <- s
	}()
	fmt.Println(<-done)
}
