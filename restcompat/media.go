package restcompat

import (
	"context"
	"errors"
	"io"
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
// type; failures are the JSON envelope like everywhere else.
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
	hd.Set("Content-Length", strconv.FormatInt(md.Size, 10))
	// The type is the sender's claim: a browser must neither sniff
	// another one nor run what it renders (an HTML "document" from a
	// stranger, served from this origin).
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Cache-Control", "private, no-store")
	if md.FileName != "" {
		hd.Set("Content-Disposition", contentDisposition(md.FileName))
	}
	w.WriteHeader(http.StatusOK)
	// Copied from the file as the client takes it: the media is never
	// whole in memory.
	_, _ = io.Copy(w, md.Body)
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
