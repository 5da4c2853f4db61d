// Package memtest measures the Go heap for the benchmarks that show what an
// attack makes the server hold (BENCHMARKS.md, "What one tenant can make
// the server hold"): the peak of the heap in use while something runs,
// above what it was before, sampled every few milliseconds.
package memtest

import (
	"runtime"
	"time"
)

// Watch collects garbage, notes the heap in use and samples it until the
// returned function is called, which returns the peak seen above that
// baseline, in bytes.
func Watch(every time.Duration) (peakAbove func() uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapInuse, m.HeapInuse
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak - base
	}
}
