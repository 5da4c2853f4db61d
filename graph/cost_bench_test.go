package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/memtest"
)

// BenchmarkAliasedPages is what one query of aliased events(first: 500)
// pages over 500 stored events of 37.5 KB makes the server hold (issue 21,
// finding 2): 20 aliases (the 375 MiB answer; refused by the cost
// limit now) and 3 (cost 9,003: within the limit, over the answer bound).
// The client discards the body as it reads it. BENCHMARKS.md keeps the
// figures:
//
//	go test -run '^$' -bench AliasedPages -benchtime 1x ./graph/
func BenchmarkAliasedPages(b *testing.B) {
	s := apptest.Start(b, apptest.Config(b))
	sess := s.CreateSession(b, "measure")
	seedEvents(b, s, sess, 500, 37_500)
	for _, aliases := range []int{20, 3} {
		b.Run(fmt.Sprintf("%d aliases", aliases), func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"query": aliasedPages(aliases), "variables": map[string]any{"s": sess}})
			var peak uint64
			var answer int64
			for b.Loop() {
				done := memtest.Watch(2 * time.Millisecond)
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", apptest.AdminToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				answer, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				peak = max(peak, done())
			}
			b.ReportMetric(float64(peak>>20), "peak-heap-MiB")
			b.ReportMetric(float64(answer), "answer-bytes")
		})
	}
}
