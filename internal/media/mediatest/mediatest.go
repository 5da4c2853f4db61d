// Package mediatest makes the images the tests of the decode bounds send:
// small, valid files that decode to a great deal of memory, made in a
// moment without an encoder that writes them.
package mediatest

import (
	"bytes"
	"encoding/binary"
)

// ProgressiveJPEG is a valid progressive JPEG of w x h pixels, every
// component sampled 1x1, all mid-gray: components is 1 (gray), 3 (YCbCr)
// or 4 (CMYK, with Adobe's APP14 marker as CMYK files carry it). Its one
// scan holds each block's DC difference, 0, in one bit, so a 2828x2828
// CMYK image, just under 8 megapixels, is 62 KB, and image/jpeg allocates
// 24 bytes a pixel to decode it, 183 MiB: its four planes, four
// coefficients' buffers of 4 bytes a pixel kept until the last scan, and
// the CMYK picture they are converted into.
func ProgressiveJPEG(w, h, components int) []byte {
	var b bytes.Buffer
	segment := func(marker byte, body []byte) {
		b.Write([]byte{0xFF, marker})
		_ = binary.Write(&b, binary.BigEndian, uint16(2+len(body)))
		b.Write(body)
	}
	b.Write([]byte{0xFF, 0xD8})
	if components == 4 {
		// Adobe, version 100, flags 0 0, transform 0: CMYK.
		segment(0xEE, []byte{'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 0})
	}
	segment(0xDB, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...)) // one quantisation table of ones
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(components)}
	for c := range components {
		sof = append(sof, byte(c+1), 0x11, 0)
	}
	segment(0xC2, sof)
	// One DC table: a single code, "0", for category 0 (a difference of 0).
	dht := append([]byte{0x00, 1}, make([]byte, 15)...)
	segment(0xC4, append(dht, 0))
	sos := []byte{byte(components)}
	for c := range components {
		sos = append(sos, byte(c+1), 0x00)
	}
	segment(0xDA, append(sos, 0, 0, 0)) // Ss 0, Se 0, Ah/Al 0: the DC scan
	blocks := ((w + 7) / 8) * ((h + 7) / 8) * components
	b.Write(make([]byte, blocks/8)) // the zero codes, eight to a byte
	if blocks%8 != 0 {
		b.WriteByte(0xFF >> (blocks % 8)) // the last ones, padded with 1 bits
	}
	b.Write([]byte{0xFF, 0xD9})
	return b.Bytes()
}
