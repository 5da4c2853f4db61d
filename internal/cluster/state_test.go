package cluster

import (
	"time"

	"github.com/wagraph/wagraph/whatsapp"
)

// sameState reports whether two session states show the same thing, their
// connection times compared as instants (a forwarded one is decoded from
// JSON, without the monotonic reading).
func sameState(a, b whatsapp.SessionState) bool {
	ct := a.ConnectedAt.Equal(b.ConnectedAt)
	a.ConnectedAt, b.ConnectedAt = time.Time{}, time.Time{}
	return ct && a == b
}
