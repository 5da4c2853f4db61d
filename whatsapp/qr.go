package whatsapp

import (
	"encoding/base64"
	"fmt"

	"rsc.io/qr"
)

// QRPNG renders a pairing code as a PNG a phone can scan. Level M survives a
// photographed screen; at 6 pixels a module the 57 to 65 modules of a
// pairing link (https://wa.me/settings/linked_devices#ref,keys,…, some 200
// to 270 characters) make an image of 390 to 440 pixels.
func QRPNG(code string) ([]byte, error) {
	c, err := qr.Encode(code, qr.M)
	if err != nil {
		return nil, fmt.Errorf("encode QR code: %w", err)
	}
	c.Scale = 6
	return c.PNG(), nil
}

// qrDataURL is QRPNG as a data:image/png;base64 URL; "" when there is no
// code (or it cannot be encoded, which a WhatsApp ref never is).
func qrDataURL(code string) string {
	if code == "" {
		return ""
	}
	png, err := QRPNG(code)
	if err != nil {
		return ""
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
}
