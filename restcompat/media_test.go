package restcompat_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/restcompat"
)

// mediaRoot is a resolver root whose MessageMedia answers from a table
// (the rest of the root is never called here).
type mediaRoot struct {
	*graph.Resolver
	media map[string]mediaAnswer
}

type mediaAnswer struct {
	data               []byte
	mimetype, fileName string
	sha256             string // kept: the ETag
	err                error
}

type seekNopCloser struct{ io.ReadSeeker }

func (seekNopCloser) Close() error { return nil }

func (r mediaRoot) MessageMedia(_ context.Context, _, messageID string) (graph.Media, error) {
	a := r.media[messageID]
	if a.err != nil {
		return graph.Media{}, a.err
	}
	return graph.Media{Body: seekNopCloser{bytes.NewReader(a.data)}, Size: int64(len(a.data)), Mimetype: a.mimetype, FileName: a.fileName, SHA256: a.sha256}, nil
}

// TestMessageMediaResponse: the media route writes the bytes with their
// content type and length, names a document's file safely, falls back to
// bytes for a mimetype that does not parse, and answers failures with the
// JSON envelope and the fault's status.
func TestMessageMediaResponse(t *testing.T) {
	root := mediaRoot{Resolver: &graph.Resolver{}, media: map[string]mediaAnswer{
		"IMG":   {data: []byte("\x89PNG..."), mimetype: "image/png"},
		"DOC":   {data: []byte("%PDF"), mimetype: "application/pdf", fileName: `Q3 "final".pdf`},
		"UTF":   {data: []byte("x"), mimetype: "text/plain; charset=utf-8", fileName: "Übersicht.txt"},
		"CTL":   {data: []byte("x"), mimetype: "application/pdf", fileName: "a\r\nSet-Cookie: x.pdf"},
		"ODD":   {data: []byte("x"), mimetype: "not a type"},
		"NONE":  {err: fault.New(fault.NotFound, "message NONE has no media")},
		"OFF":   {err: fault.New(fault.NotConnected, "session s is not connected (status: DISCONNECTED)")},
		"WA":    {err: fault.New(fault.WhatsAppError, "session s could not download the media")},
		"EMPTY": {data: []byte{}, mimetype: "audio/ogg; codecs=opus"},
	}}
	h := restcompat.New(restcompat.Deps{Resolvers: root, Media: root}, slog.New(slog.DiscardHandler))
	tests := []struct {
		status                                int
		msgID, contentType, disposition, body string
	}{
		{msgID: "IMG", status: 200, contentType: "image/png", body: "\x89PNG..."},
		{msgID: "DOC", status: 200, contentType: "application/pdf", disposition: `inline; filename="Q3 \"final\".pdf"`, body: "%PDF"},
		{msgID: "UTF", status: 200, contentType: "text/plain; charset=utf-8", disposition: "inline; filename*=utf-8''%C3%9Cbersicht.txt", body: "x"},
		{msgID: "CTL", status: 200, contentType: "application/pdf", disposition: "inline; filename*=utf-8''a%0D%0ASet-Cookie%3A%20x.pdf", body: "x"},
		{msgID: "ODD", status: 200, contentType: "application/octet-stream", body: "x"},
		{msgID: "EMPTY", status: 200, contentType: "audio/ogg; codecs=opus", body: ""},
		{msgID: "NONE", status: 404, contentType: "application/json", body: `{"status":"failed","message":"message NONE has no media"}`},
		{msgID: "OFF", status: 409, contentType: "application/json", body: `"message":"session s is not connected`},
		{msgID: "WA", status: 502, contentType: "application/json", body: `"message":"session s could not download the media"`},
	}
	for _, tt := range tests {
		t.Run(tt.msgID, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/session/s/message/"+tt.msgID+"/media", nil))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
			}
			if cd := rec.Header().Get("Content-Disposition"); cd != tt.disposition {
				t.Errorf("Content-Disposition %q, want %q", cd, tt.disposition)
			}
			if tt.status != 200 {
				if !strings.Contains(rec.Body.String(), tt.body) {
					t.Errorf("body %s, want it to contain %s", rec.Body, tt.body)
				}
				return
			}
			if rec.Body.String() != tt.body {
				t.Errorf("body %q, want %q", rec.Body, tt.body)
			}
			if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(tt.body)) {
				t.Errorf("Content-Length %q, want %d", cl, len(tt.body))
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "sandbox") {
				t.Errorf("served without nosniff and a sandbox policy: %v", rec.Header())
			}
		})
	}
}

// TestMessageMediaRanges: kept media is served with its SHA-256 as the
// ETag; a Range is answered 206 with exactly its bytes (also for media
// downloaded on demand), a range outside the media 416 with the JSON
// envelope, and a request naming the current ETag 304.
func TestMessageMediaRanges(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	const sum = "5b0e4ac6bb0d9a3c8b1d4dcbb2c8d3d1a8e1c7d24b41c6e3c0b9f7f7d4b9a0c1"
	root := mediaRoot{Resolver: &graph.Resolver{}, media: map[string]mediaAnswer{
		"KEPT": {data: data, mimetype: "application/pdf", sha256: sum},
		"LIVE": {data: data, mimetype: "application/pdf"},
	}}
	h := restcompat.New(restcompat.Deps{Resolvers: root, Media: root}, slog.New(slog.DiscardHandler))
	for _, tt := range []struct {
		name, id, rng, ifNoneMatch string
		status                     int
		body, etag, contentRange   string
	}{
		{name: "kept whole", id: "KEPT", status: 200, body: string(data), etag: `"` + sum + `"`},
		{name: "kept range", id: "KEPT", rng: "bytes=3-7", status: 206, body: "34567", etag: `"` + sum + `"`, contentRange: "bytes 3-7/20"},
		{name: "kept suffix", id: "KEPT", rng: "bytes=-4", status: 206, body: "ghij", etag: `"` + sum + `"`, contentRange: "bytes 16-19/20"},
		{name: "kept not modified", id: "KEPT", ifNoneMatch: `"` + sum + `"`, status: 304, etag: `"` + sum + `"`},
		{name: "outside", id: "KEPT", rng: "bytes=30-40", status: 416, body: `{"status":"failed","message":"range: \"bytes=30-40\" is outside the media (bytes */20)"}` + "\n", contentRange: "bytes */20"},
		{name: "on demand range", id: "LIVE", rng: "bytes=10-", status: 206, body: "abcdefghij", contentRange: "bytes 10-19/20"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/session/s/message/"+tt.id+"/media", nil)
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			if tt.ifNoneMatch != "" {
				req.Header.Set("If-None-Match", tt.ifNoneMatch)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.body {
				t.Fatalf("%d %q, want %d %q", rec.Code, rec.Body, tt.status, tt.body)
			}
			hd := rec.Header()
			if hd.Get("ETag") != tt.etag || hd.Get("Content-Range") != tt.contentRange {
				t.Errorf("ETag %q Content-Range %q, want %q %q", hd.Get("ETag"), hd.Get("Content-Range"), tt.etag, tt.contentRange)
			}
			if tt.status == 200 || tt.status == 206 {
				if hd.Get("Content-Length") != strconv.Itoa(len(tt.body)) || hd.Get("Accept-Ranges") != "bytes" {
					t.Errorf("Content-Length %q Accept-Ranges %q, want %d bytes", hd.Get("Content-Length"), hd.Get("Accept-Ranges"), len(tt.body))
				}
			}
		})
	}
}
