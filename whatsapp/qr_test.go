package whatsapp

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"
)

func TestQRImage(t *testing.T) {
	t.Parallel()
	// A pairing link as whatsmeow shows it (makeQRData, pair.go).
	code := "https://wa.me/settings/linked_devices#2@" + strings.Repeat("AbCd", 20) + "," + strings.Repeat("x", 44) + "," + strings.Repeat("y", 44) + "," + strings.Repeat("z", 44) + ",9"
	url := qrDataURL(code)
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(url, prefix) {
		t.Fatalf("qrDataURL = %.40q…, want a PNG data URL", url)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, prefix))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != b.Dy() || b.Dx() < 100 {
		t.Errorf("QR image is %dx%d, want a square of at least 100 px", b.Dx(), b.Dy())
	}
	if qrDataURL("") != "" {
		t.Error("no code must give no image")
	}
}
