package webhook_test

import (
	"testing"

	"github.com/wagraph/wagraph/internal/webhook"
)

// TestListTotal checks the total of every page: a page that is not full is
// answered without counting, the others count; all must give the number of
// the session's webhooks, and the items the right slice of them.
func TestListTotal(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5} {
		reg, _ := newRegistry(t, false)
		var ids []string
		for range n {
			url := "https://example.com/hook"
			w, _, err := reg.Create(t.Context(), "s1", webhook.Spec{URL: &url})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
		}
		for _, tc := range []struct{ page, size int }{
			{1, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 2}, {1, 4}, {2, 4}, {1, 20}, {2, 20}, {9, 20},
		} {
			res, err := reg.List(t.Context(), "s1", tc.page, tc.size)
			if err != nil {
				t.Fatalf("n=%d page %d size %d: %v", n, tc.page, tc.size, err)
			}
			if res.Total != n {
				t.Errorf("n=%d page %d size %d: total %d, want %d", n, tc.page, tc.size, res.Total, n)
			}
			from := min((tc.page-1)*tc.size, n)
			want := ids[from:min(from+tc.size, n)]
			var got []string
			for _, w := range res.Items {
				got = append(got, w.ID)
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d page %d size %d: items %v, want %v", n, tc.page, tc.size, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("n=%d page %d size %d: items %v, want %v", n, tc.page, tc.size, got, want)
					break
				}
			}
		}
	}
}
