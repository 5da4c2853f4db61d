package media

import (
	"encoding/binary"
	"image/color"
)

// decodedCost is what one pixel of an image costs once decoded, in bytes,
// read from its header's color model (what image.Decode will allocate),
// with a word for the error message. A 16-bit PNG decodes to 8 bytes a
// pixel, an 8-bit one to 4, a palette to 1. A progressive JPEG also keeps
// every DCT coefficient (4 bytes each) of every component until the last
// scan: 4:2:0 costs 1.5 bytes a pixel baseline but 7.5 progressive.
func decodedCost(m color.Model, format string, data []byte) (float64, string) {
	if format == "jpeg" {
		if share, progressive, ok := jpegLayout(data); ok {
			what := "JPEG"
			if progressive {
				share, what = 5*share, "progressive JPEG"
			}
			if m == color.RGBAModel || m == color.CMYKModel {
				share += 4 // the planes are converted to a picture of their own
			}
			return share, what
		}
	}
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1, "8-bit gray"
	case color.Gray16Model, color.Alpha16Model:
		return 2, "16-bit gray"
	case color.YCbCrModel:
		return 3, "YCbCr"
	case color.NYCbCrAModel:
		return 4, "YCbCr with alpha"
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4, "8-bit color"
	case color.RGBA64Model, color.NRGBA64Model:
		return 8, "16-bit color"
	}
	if _, ok := m.(color.Palette); ok {
		return 1, "paletted"
	}
	return 8, "color" // unknown: the widest model
}

// jpegLayout reads a JPEG's frame header: share is the bytes per pixel of
// its decoded planes (one per component, subsampled ones smaller), and
// progressive says whether it is coded in several scans. ok is false when
// no frame header is found before the data.
func jpegLayout(data []byte) (share float64, progressive, ok bool) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return 0, false, false
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return 0, false, false
		}
		marker := data[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		length := int(binary.BigEndian.Uint16(data[i+2:]))
		seg := data[i+4 : min(len(data), i+2+length)]
		switch marker {
		case 0xC0, 0xC1, 0xC2: // the frames Go's decoder reads
			// precision, height, width, components, then 3 bytes each
			if len(seg) < 6 {
				return 0, false, false
			}
			n := int(seg[5])
			if n == 0 || len(seg) < 6+3*n {
				return 0, false, false
			}
			hmax, vmax := 1, 1
			for c := range n {
				f := seg[6+3*c+1]
				hmax, vmax = max(hmax, int(f>>4)), max(vmax, int(f&0x0F))
			}
			for c := range n {
				f := seg[6+3*c+1]
				share += float64(int(f>>4)*int(f&0x0F)) / float64(hmax*vmax)
			}
			return share, marker == 0xC2, true
		case 0xDA, 0xD9: // scan or end before any frame
			return 0, false, false
		}
		if length < 2 {
			return 0, false, false
		}
		i += 2 + length
	}
	return 0, false, false
}
