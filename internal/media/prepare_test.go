package media

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

func TestVideo(t *testing.T) {
	ff := needFFmpeg(t)
	mp4 := ffmpegMake(t, ".mp4", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=2",
		"-c:v", "mpeg4", "-f", "mp4")
	threeGP := ffmpegMake(t, ".3gp", "-f", "lavfi", "-i", "testsrc=size=176x144:rate=10:duration=1",
		"-c:v", "mpeg4", "-f", "3gp")
	cases := []struct {
		name          string
		ffmpeg        string
		data          []byte
		mimetype      string
		width, height uint32
		seconds       uint32
		thumbW        int // 0: no thumbnail expected
		thumbH        int
	}{
		{"mp4 with ffmpeg", ff, mp4, "video/mp4", 160, 120, 2, 72, 54},
		{"mp4 without ffmpeg", "", mp4, "video/mp4", 160, 120, 2, 0, 0},
		{"3gpp with ffmpeg", ff, threeGP, "video/3gpp", 176, 144, 1, 72, 59},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewPreparer(c.ffmpeg, nil).Video(t.Context(), c.data, "clip.mp4")
			if err != nil {
				t.Fatal(err)
			}
			if f.Mimetype != c.mimetype || f.Width != c.width || f.Height != c.height || f.Seconds != c.seconds || f.FileName != "clip.mp4" {
				t.Fatalf("got %s %dx%d %ds %q; want %s %dx%d %ds", f.Mimetype, f.Width, f.Height, f.Seconds, f.FileName, c.mimetype, c.width, c.height, c.seconds)
			}
			if c.thumbW == 0 {
				if f.Thumbnail != nil {
					t.Fatal("a thumbnail without ffmpeg")
				}
				return
			}
			if b := decodeJPEG(t, f.Thumbnail).Bounds(); b.Dx() != c.thumbW || b.Dy() != c.thumbH {
				t.Fatalf("thumbnail %dx%d, want %dx%d", b.Dx(), b.Dy(), c.thumbW, c.thumbH)
			}
		})
	}

	m4a := ffmpegMake(t, ".m4a", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", "-f", "ipod")
	over := make([]byte, MaxVideo+1)
	copy(over, mp4)
	refused := []struct {
		name  string
		data  []byte
		code  fault.Code
		parts []string
	}{
		{"gif", makeGIF(t, pictureOf(8, 8, gradient)), fault.Unsupported, []string{"GIF", "MP4", "gifPlayback: true"}},
		{"audio-only mp4", m4a, fault.Unsupported, []string{"source is audio/mp4", "MP4 (video/mp4) or 3GPP (video/3gpp)"}},
		{"webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm"), fault.Unsupported, []string{"source is video/webm"}},
		{"over the limit", over, fault.TooLarge, []string{"WhatsApp takes videos up to 64 MiB"}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPreparer(ff, nil).Video(t.Context(), c.data, "")
			wantFault(t, err, c.code, "", c.parts...)
		})
	}

	t.Run("unreadable mp4 still goes, without thumbnail", func(t *testing.T) {
		broken := append(bytes.Clone(mp4[:64]), make([]byte, 256)...)
		f, err := NewPreparer(ff, nil).Video(t.Context(), broken, "")
		if err != nil || f.Thumbnail != nil || f.Mimetype != "video/mp4" {
			t.Fatalf("got %s thumbnail %d bytes, %v", f.Mimetype, len(f.Thumbnail), err)
		}
	})
}

func TestDocument(t *testing.T) {
	pdf := []byte("%PDF-1.7\n1 0 obj << >> endobj\n")
	zip := []byte("PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00")
	binary := []byte{0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0x10, 0x20}
	type docCase struct {
		name, fileName string
		data           []byte
		mimetype, want string
	}
	cases := []docCase{
		{"pdf without a name", "", pdf, "application/pdf", "document.pdf"},
		{"pdf keeps its name", "Q3 report.pdf", pdf, "application/pdf", "Q3 report.pdf"},
		{"a name does not change what the bytes are", "invoice.json", pdf, "application/pdf", "invoice.json"},
		{"json text refined by extension", "data.json", []byte(`{"a": 1}`), "application/json", "data.json"},
		{"css text refined by extension", "site.css", []byte("body { color: red }"), "text/css", "site.css"},
		{"text without a name", "", []byte("plain words"), "text/plain", "document.txt"},
		{"text claiming to be a png stays text", "fake.png", []byte("plain words"), "text/plain", "fake.png"},
		{"binary claiming to be a pdf stays binary", "fake.pdf", binary, "application/octet-stream", "fake.pdf"},
		{"unknown binary", "", binary, "application/octet-stream", "document.bin"},
		{"zip", "", zip, "application/zip", "document.zip"},
		{"paths are dropped", `C:\Users\me\notes.txt`, []byte("words"), "text/plain", "notes.txt"},
		{"control characters are dropped", "a\x00b\nc.txt", []byte("words"), "text/plain", "abc.txt"},
		{"dot-dot is no name", "../..", []byte("words"), "text/plain", "document.txt"},
	}
	p := NewPreparer("", nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := p.Document(t.Context(), c.data, c.fileName)
			if err != nil {
				t.Fatal(err)
			}
			if f.Mimetype != c.mimetype || f.FileName != c.want || !bytes.Equal(f.Data, c.data) {
				t.Fatalf("got %s %q, want %s %q", f.Mimetype, f.FileName, c.mimetype, c.want)
			}
		})
	}
	long := strings.Repeat("é", 300) + ".txt"
	if f, _ := p.Document(t.Context(), []byte("x"), long); len(f.FileName) > 200 || !strings.HasPrefix(f.FileName, "é") || !strings.HasSuffix(f.FileName, "é.txt") {
		t.Fatalf("long name kept as %d bytes", len(f.FileName))
	}
	_, err := p.Document(t.Context(), make([]byte, MaxDocument+1), "big.bin")
	wantFault(t, err, fault.TooLarge, "", "WhatsApp takes documents up to 100 MiB")

	// A document kept in a file (a forward's) is judged from its first
	// HeadLen bytes and its size: as the whole of it is.
	longPDF := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("0 0 obj << >> endobj\n"), 3*HeadLen/20)...)
	longJSON := bytes.Repeat([]byte(`{"a": 1}`+"\n"), 2*HeadLen/9)
	cases = append(cases,
		docCase{"a pdf longer than its head", "", longPDF, "application/pdf", "document.pdf"},
		docCase{"json longer than its head", "data.json", longJSON, "application/json", "data.json"})
	for _, c := range cases {
		t.Run("from its head: "+c.name, func(t *testing.T) {
			f, err := p.DocumentFile(t.Context(), c.data[:min(len(c.data), HeadLen)], int64(len(c.data)), c.fileName)
			if err != nil {
				t.Fatal(err)
			}
			if f.Mimetype != c.mimetype || f.FileName != c.want || f.Data != nil {
				t.Fatalf("got %s %q (%d bytes of data), want %s %q and no data", f.Mimetype, f.FileName, len(f.Data), c.mimetype, c.want)
			}
		})
	}
	_, err = p.DocumentFile(t.Context(), pdf, MaxDocument+1, "big.pdf")
	wantFault(t, err, fault.TooLarge, "", "source is 100.1 MiB; WhatsApp takes documents up to 100 MiB")
}
