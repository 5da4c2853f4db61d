package e2e

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"net/http"
	"strings"
	"testing"

	"github.com/gen2brain/webp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// animatedGIF is a w×h GIF of frames frames, each a different colour.
func animatedGIF(t *testing.T, w, h, frames int) []byte {
	t.Helper()
	pal := color.Palette{color.Black, color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}}
	g := &gif.GIF{}
	for i := range frames {
		img := image.NewPaletted(image.Rect(0, 0, w, h), pal)
		for y := range h {
			for x := range w {
				img.SetColorIndex(x, y, uint8(1+(i+x/8)%3))
			}
		}
		g.Image, g.Delay = append(g.Image, img), append(g.Delay, 20)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSendSticker: a PNG becomes a static 512×512 WebP sticker and an
// animated GIF an animated one, as the recipient's phone decrypts and
// decodes them; what is no image is refused naming source.
func TestSendSticker(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ana = apptest.LinkedPhone, "4915550300002"

	for _, tt := range []struct {
		name     string
		source   []byte
		animated bool
		frames   int
	}{
		{"a PNG", pngImage(t, 300, 200), false, 1},
		{"an animated GIF", animatedGIF(t, 64, 48, 3), true, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := restSend(t, s, sess.ID, "sticker", map[string]any{"number": ana, "source": base64.StdEncoding.EncodeToString(tt.source)})
			got := received(t, s, ana, id)
			if got.Type != "sticker" || !got.Sticker || got.Animated != tt.animated || str(got.Mimetype) != "image/webp" {
				t.Fatalf("the phone decrypted %+v, want a sticker (animated %v) of image/webp", got, tt.animated)
			}
			var data []byte
			for _, r := range n.Inbox(ana) {
				if r.ID == id {
					var err error
					if data, err = n.MediaOf(r.Message); err != nil {
						t.Fatal(err)
					}
				}
			}
			all, err := webp.DecodeAll(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("the sticker is no WebP the phone can decode: %v", err)
			}
			b := all.Image[0].Bounds()
			if b.Dx() != 512 || b.Dy() != 512 || len(all.Image) != tt.frames {
				t.Errorf("the sticker is %d×%d with %d frames, want 512×512 with %d", b.Dx(), b.Dy(), len(all.Image), tt.frames)
			}
		})
	}

	r := s.REST(t, "POST", "/session/"+sess.ID+"/message/sticker", apptest.AdminToken,
		`{"number":"`+ana+`","source":"`+base64.StdEncoding.EncodeToString([]byte("no picture at all"))+`"}`)
	if r.Status == http.StatusOK || !strings.Contains(r.Message(t), "source") {
		t.Errorf("a sticker of text: %d %q, want a refusal naming source", r.Status, r.Message(t))
	}
}
