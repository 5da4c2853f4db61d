package media

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMeasureSixLargePNGs measures the heap six concurrent prepares of an
// 8192² PNG take (issue 21, finding 3), 16-bit (512 MiB decoded) and 8-bit
// (256 MiB, within the bound), and how each ended. A measurement, not a
// check: it runs with WAGRAPH_MEASURE=1 (without -race) and only logs;
// BENCHMARKS.md keeps the numbers.
func TestMeasureSixLargePNGs(t *testing.T) {
	if os.Getenv("WAGRAPH_MEASURE") == "" {
		t.Skip("a measurement: WAGRAPH_MEASURE=1 runs it")
	}
	for _, depth := range []byte{16, 8} {
		data := blackPNG(t, 8192, depth)
		p := NewPreparer("", nil)
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		var wg sync.WaitGroup
		var ok, refused atomic.Int32
		for range 6 {
			wg.Go(func() {
				if _, err := p.Image(t.Context(), data, ""); err != nil {
					refused.Add(1)
					return
				}
				ok.Add(1)
			})
		}
		wg.Wait()
		close(stop)
		<-sampled
		t.Logf("%d-bit 8192² PNG (%d bytes), six at once: %d prepared, %d refused, heap in use at its peak %d MiB over the baseline, %s",
			depth, len(data), ok.Load(), refused.Load(), (peak.Load()-min(peak.Load(), base.HeapInuse))>>20, time.Since(start).Round(time.Millisecond))
	}
}
