package webhook

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// DefaultTolerance is how far a delivery's webhook-timestamp may be from the
// receiver's clock: the Standard Webhooks libraries' five minutes. A
// captured delivery replayed later than that is refused.
const DefaultTolerance = 5 * time.Minute

// Verify is a receiver's check of one delivery: the headers Sign and
// SignedHeaders produce, a timestamp within tolerance of now, and one of the
// space-separated v1 signatures matching the body under secret. Its errors
// say which of these failed; none quotes the secret.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature header")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not unix seconds", fault.Clip(ts, fault.QuoteLen))
	}
	sent := time.Unix(sec, 0)
	if d := now.Sub(sent); d > tolerance || d < -tolerance {
		return fmt.Errorf("webhook-timestamp is %s away from this clock (tolerance %s): a replay, or a clock to set", d.Round(time.Second), tolerance)
	}
	want, err := Sign(secret, id, sent, body)
	if err != nil {
		return err
	}
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches: another secret, or a body changed on the way")
}
