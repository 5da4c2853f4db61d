package media

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/memtest"
)

// BenchmarkSixLargePNGs is what six concurrent prepares of an 8192² PNG
// make the heap hold (issue 21, finding 3): 16-bit (512 MiB decoded,
// refused from its header) and 8-bit (256 MiB, within the bound, decoded
// as the image pool lets them). BENCHMARKS.md keeps the figures:
//
//	go test -run '^$' -bench SixLargePNGs -benchtime 1x ./internal/media/
func BenchmarkSixLargePNGs(b *testing.B) {
	for _, depth := range []byte{16, 8} {
		b.Run(map[byte]string{16: "16-bit", 8: "8-bit"}[depth], func(b *testing.B) {
			data := blackPNG(b, 8192, depth)
			p := NewPreparer("", nil)
			var peak uint64
			var prepared atomic.Int32
			for b.Loop() {
				prepared.Store(0)
				done := memtest.Watch(5 * time.Millisecond)
				var wg sync.WaitGroup
				for range 6 {
					wg.Go(func() {
						if _, err := p.Image(b.Context(), data, ""); err == nil {
							prepared.Add(1)
						}
					})
				}
				wg.Wait()
				peak = max(peak, done())
			}
			b.ReportMetric(float64(peak>>20), "peak-heap-MiB")
			b.ReportMetric(float64(prepared.Load()), "prepared-of-6")
		})
	}
}
