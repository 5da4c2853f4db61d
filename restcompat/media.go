package restcompat

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/wagraph/wagraph/graph"
)

// MediaSource is the resolver of the routes that answer bytes: a
// message's media, a profile picture's JPEG. GraphQL has no field for
// bytes, so the root resolver (graph.Resolver) offers them beside Query
// and Mutation.
type MediaSource interface {
	MessageMedia(ctx context.Context, sessionID, messageID string) (graph.Media, error)
	ProfilePictureJPEG(ctx context.Context, sessionID, chat string, preview bool) ([]byte, error)
}

var errNoMediaSource = errors.New("restcompat: no media source was given")

// getMessageMedia streams a message's decrypted media with its content
// type: the kept file, or the one downloaded on demand. http.ServeContent
// answers Range requests (206; 416, as the JSON envelope, for a range
// outside the media), If-None-Match against the ETag (the kept file's
// SHA-256, quoted) and If-Range; failures are the JSON envelope like
// everywhere else.
func (h *Handler) getMessageMedia(w http.ResponseWriter, r *http.Request) {
	if h.media == nil {
		writeError(w, r, h.log, errNoMediaSource)
		return
	}
	md, err := h.media.MessageMedia(r.Context(), r.PathValue("sessionId"), r.PathValue("messageId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	defer md.Body.Close()
	hd := w.Header()
	hd.Set("Content-Type", contentType(md.Mimetype))
	// The type is the sender's claim: a browser must neither sniff
	// another one nor run what it renders (an HTML "document" from a
	// stranger, served from this origin).
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Cache-Control", "private, no-store")
	if md.FileName != "" {
		hd.Set("Content-Disposition", contentDisposition(md.FileName))
	}
	if md.SHA256 != "" {
		hd.Set("ETag", `"`+md.SHA256+`"`)
	}
	// Read from the file as the client takes it (ServeContent copies in
	// chunks, from a range's start): never whole in memory.
	http.ServeContent(&rangeErrors{ResponseWriter: w, r: r}, r, "", md.ModTime, md.Body)
}

// rangeErrors turns ServeContent's plain-text 416 into the JSON failure
// envelope of every other failure, with its Content-Range.
type rangeErrors struct {
	http.ResponseWriter
	r       *http.Request
	swallow bool
}

func (w *rangeErrors) WriteHeader(code int) {
	if code != http.StatusRequestedRangeNotSatisfiable {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.swallow = true
	writeJSON(w.ResponseWriter, code, failure{Status: "failed",
		Message: "range: " + strconv.Quote(w.r.Header.Get("Range")) + " is outside the media (" + w.Header().Get("Content-Range") + ")"})
}

func (w *rangeErrors) Write(p []byte) (int, error) {
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// contentType is a stored mimetype as a header value: one that does not
// parse (it came from another WhatsApp client) is served as bytes.
func contentType(mimetype string) string {
	t, params, err := mime.ParseMediaType(mimetype)
	if err != nil {
		return "application/octet-stream"
	}
	return mime.FormatMediaType(t, params)
}

// contentDisposition names a document's file inline. The name is the
// sender's: mime.FormatMediaType quotes it, and percent-encodes one beyond
// printable ASCII (control characters too) as RFC 2231 filename*, so no
// name can end the header.
func contentDisposition(fileName string) string {
	if v := mime.FormatMediaType("inline", map[string]string{"filename": fileName}); v != "" {
		return v
	}
	return "inline"
}
