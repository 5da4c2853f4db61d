package webhook

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"testing"
	"time"
)

// BenchmarkSign: the signature of one delivery (Sign) and the headers a
// delivery sends with it (SignedHeaders), for a typical body and a large one.
func BenchmarkSign(b *testing.B) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a}, 32))
	const id = "evt_01JGZ8Q6ZK3VY5R0M8T2W4N6P9"
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, size := range []int{1 << 10, 64 << 10} {
		body := bytes.Repeat([]byte("x"), size)
		b.Run(fmt.Sprintf("Sign/body=%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := Sign(secret, id, ts, body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("SignedHeaders/body=%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := SignedHeaders(secret, id, ts, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
