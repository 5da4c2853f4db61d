package media

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"os"
	"testing"
)

// tkhd is a version 0 track header with a display size and matrix a, b.
func tkhd(w, h uint32, a, b int32) []byte {
	body := make([]byte, 84)
	binary.BigEndian.PutUint32(body[40:], uint32(a))
	binary.BigEndian.PutUint32(body[44:], uint32(b))
	binary.BigEndian.PutUint32(body[76:], w<<16)
	binary.BigEndian.PutUint32(body[80:], h<<16)
	return box("tkhd", body)
}

func hdlr(kind string) []byte {
	return box("hdlr", make([]byte, 8), []byte(kind), make([]byte, 12))
}

func mvhd(timescale, duration uint32) []byte {
	body := make([]byte, 100)
	binary.BigEndian.PutUint32(body[12:], timescale)
	binary.BigEndian.PutUint32(body[16:], duration)
	return box("mvhd", body)
}

func ftyp(major string, compatible ...string) []byte {
	body := append([]byte(major), 0, 0, 2, 0)
	for _, c := range compatible {
		body = append(body, c...)
	}
	return box("ftyp", body)
}

func trak(kind string, w, h uint32, a, b int32) []byte {
	return box("trak", tkhd(w, h, a, b), box("mdia", box("mdhd", make([]byte, 24)), hdlr(kind)))
}

func TestDetect(t *testing.T) {
	webp, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	small := pictureOf(4, 4, func(x, y int) color.Color { return color.White })
	videoMoov := box("moov", mvhd(1000, 2000), trak("vide", 640, 480, 1<<16, 0), trak("soun", 0, 0, 1<<16, 0))
	audioMoov := box("moov", mvhd(1000, 2000), trak("soun", 0, 0, 1<<16, 0))
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"png", makePNG(t, small), "image/png"},
		{"jpeg", makeJPEG(t, small), "image/jpeg"},
		{"gif", makeGIF(t, small), "image/gif"},
		{"webp", webp, "image/webp"},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"), "application/pdf"},
		{"text", []byte("hello, world\n"), "text/plain"},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), "application/zip"},
		{"ogg opus", oggPageOf(1, 0, opusHead(312)), "audio/ogg; codecs=opus"},
		{"ogg vorbis", oggPageOf(1, 0, []byte("\x01vorbis\x00\x00\x00\x00")), "audio/ogg"},
		{"ogg theora", oggPageOf(1, 0, []byte("\x80theora")), "video/ogg"},
		{"ogg unknown", oggPageOf(1, 0, []byte("something")), "application/ogg"},
		{"amr", []byte("#!AMR\n\x3c\x00\x00"), "audio/amr"},
		{"amr-wb", []byte("#!AMR-WB\n\x04"), "audio/amr-wb"},
		{"flac", []byte("fLaC\x00\x00\x00\x22"), "audio/flac"},
		{"mp3 with ID3", []byte("ID3\x04\x00\x00\x00\x00\x00\x00"), "audio/mpeg"},
		{"mp3 frame sync", []byte{0xFF, 0xFB, 0x90, 0x64, 0x00, 0x00}, "audio/mpeg"},
		{"mpeg-2 layer 3", []byte{0xFF, 0xF3, 0x48, 0xC4, 0x00}, "audio/mpeg"},
		{"adts aac", []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC}, "audio/aac"},
		{"ff bytes are no frame", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x00}, "application/octet-stream"},
		{"wav", makeWAV(1, 8000)[:64], "audio/wav"},
		{"m4a brand", append(ftyp("M4A ", "M4A ", "mp42", "isom"), audioMoov...), "audio/mp4"},
		{"isom with video track", append(ftyp("isom", "isom", "mp41"), videoMoov...), "video/mp4"},
		{"isom with only sound", append(ftyp("isom", "isom", "mp41"), audioMoov...), "audio/mp4"},
		{"mp4 without moov yet", ftyp("mp42", "isom"), "video/mp4"},
		{"3gpp", ftyp("3gp4", "3gp4", "isom"), "video/3gpp"},
		{"3gpp2", ftyp("3g2a", "3g2a"), "video/3gpp2"},
		{"quicktime", ftyp("qt  ", "qt  "), "video/quicktime"},
		{"webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm"), "video/webm"},
		{"empty", nil, "text/plain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := detect(c.data); got != c.want {
				t.Fatalf("detect = %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseMP4(t *testing.T) {
	cases := []struct {
		name          string
		data          []byte
		seconds       float64
		width, height uint32
		video, audio  bool
	}{
		{"landscape", append(ftyp("isom"), box("moov", mvhd(600, 1500), trak("vide", 1920, 1080, 1<<16, 0))...), 2.5, 1920, 1080, true, false},
		// Phones store portrait video as landscape plus a 90 degree matrix.
		{"rotated", append(ftyp("isom"), box("moov", mvhd(1000, 4000), trak("soun", 0, 0, 1<<16, 0), trak("vide", 1920, 1080, 0, 1<<16))...), 4, 1080, 1920, true, true},
		// mdat before moov, and moov found behind it.
		{"moov at the end", append(append(ftyp("isom"), box("mdat", make([]byte, 5000))...), box("moov", mvhd(1, 7), trak("vide", 320, 240, 1<<16, 0))...), 7, 320, 240, true, false},
		{"audio only", append(ftyp("M4A "), box("moov", mvhd(44100, 44100*3), trak("soun", 0, 0, 1<<16, 0))...), 3, 0, 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, ok := parseMP4(c.data)
			if !ok || info.seconds != c.seconds || info.width != c.width || info.height != c.height || info.hasVideo != c.video || info.hasAudio != c.audio {
				t.Fatalf("parseMP4 = %+v, %v; want %vs %dx%d video %v audio %v", info, ok, c.seconds, c.width, c.height, c.video, c.audio)
			}
		})
	}
	if _, ok := parseMP4(ftyp("isom")); ok {
		t.Fatal("a file without moov parsed")
	}
	// A box claiming more bytes than there are must not panic or loop.
	broken := append(ftyp("isom"), 0xFF, 0xFF, 0xFF, 0xFF, 'm', 'o', 'o', 'v', 0, 0, 0, 1, 't', 'r', 'a', 'k')
	parseMP4(broken)
}

func TestParseOggOpus(t *testing.T) {
	celt20ms := func(size int) []byte { // TOC config 31: CELT 20 ms, one frame
		p := make([]byte, size)
		p[0] = 31 << 3
		return p
	}
	long := celt20ms(600) // spans three lacing segments
	var data []byte
	data = append(data, oggPageOf(7, 0, opusHead(312))...)
	data = append(data, oggPageOf(7, 0, []byte("OpusTags........"))...)
	data = append(data, oggPageOf(9, 123, []byte("another stream"))...)
	data = append(data, oggPageOf(7, 48000, celt20ms(10), long, celt20ms(30))...)
	data = append(data, oggPageOf(7, 312+48000*3, celt20ms(40))...)
	s, ok := parseOggOpus(data)
	if !ok {
		t.Fatal("not parsed")
	}
	if s.preSkip != 312 || s.seconds() != 3 || len(s.packets) != 4 {
		t.Fatalf("pre-skip %d, %d s, %d packets; want 312, 3 s, 4", s.preSkip, s.seconds(), len(s.packets))
	}
	for i, want := range []int{10, 600, 30, 40} {
		if s.packets[i].size != want || s.packets[i].millis != 20 {
			t.Errorf("packet %d: %+v, want %d bytes of 20 ms", i, s.packets[i], want)
		}
	}
	if _, ok := parseOggOpus(oggPageOf(1, 0, []byte("\x01vorbis"))); ok {
		t.Fatal("vorbis parsed as opus")
	}
	// A cut-off last page keeps what came before.
	if s, ok := parseOggOpus(data[:len(data)-5]); !ok || s.seconds() != 1 {
		t.Fatalf("truncated: %v %d s", ok, s.seconds())
	}
}

func TestOpusPacketMillis(t *testing.T) {
	cases := []struct {
		toc  []byte
		want float64
	}{
		{[]byte{0<<3 | 0}, 10},        // SILK NB 10 ms
		{[]byte{3<<3 | 0}, 60},        // SILK NB 60 ms
		{[]byte{9<<3 | 1}, 40},        // SILK WB 20 ms, two frames
		{[]byte{12<<3 | 0}, 10},       // hybrid 10 ms
		{[]byte{16<<3 | 0}, 2.5},      // CELT 2.5 ms
		{[]byte{31<<3 | 2}, 40},       // CELT 20 ms, two frames
		{[]byte{19<<3 | 3, 0x83}, 60}, // CELT 20 ms, code 3 with three frames
		{nil, 0},
	}
	for _, c := range cases {
		if got := opusPacketMillis(c.toc); got != c.want {
			t.Errorf("opusPacketMillis(%x) = %v, want %v", c.toc, got, c.want)
		}
	}
}

func TestWaveforms(t *testing.T) {
	rising := make([]int16, 8000)
	for i := range rising {
		v := int16(i * 4)
		if i%2 == 1 {
			v = -v
		}
		rising[i] = v
	}
	w := pcmWaveform(rising)
	if len(w) != 64 || w[63] != 100 || w[0] > 5 {
		t.Fatalf("rising PCM waveform %v", w)
	}
	for i := 1; i < 64; i++ {
		if w[i] < w[i-1] {
			t.Fatalf("rising PCM waveform falls at %d: %v", i, w)
		}
	}
	if w := pcmWaveform(make([]int16, 100)); !bytes.Equal(w, make([]byte, 64)) {
		t.Fatalf("silence: %v", w)
	}
	if w := pcmWaveform([]int16{1000, -1000, 5}); len(w) != 64 {
		t.Fatalf("fewer samples than slices: %d values", len(w))
	}

	var packets []opusPacket
	for i := range 100 {
		size := 3 // silence costs Opus almost nothing
		if i >= 50 {
			size = 80
		}
		packets = append(packets, opusPacket{size: size, millis: 20})
	}
	w = packetWaveform(packets)
	if len(w) != 64 || w[0] > 10 || w[63] != 100 {
		t.Fatalf("packet waveform %v", w)
	}
	if w := packetWaveform([]opusPacket{{size: 50, millis: 20}, {size: 10, millis: 20}}); len(w) != 64 || w[0] != 100 || w[63] != 20 {
		t.Fatalf("fewer packets than slices: %v", w)
	}
	if w := packetWaveform(nil); !bytes.Equal(w, make([]byte, 64)) {
		t.Fatalf("no packets: %v", w)
	}
}
