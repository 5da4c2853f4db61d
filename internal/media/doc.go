// Package media prepares the media of WhatsApp sends.
//
// A Loader turns a request's `source` into bytes: an http(s) URL fetched
// through one guarded client (no loopback, private, link-local or metadata
// destinations unless --allow-private-urls, checked on every address the
// dialer connects to, redirects included), or base64 data. A Preparer then
// checks what the bytes really are against what WhatsApp takes, enforces its
// size limits, and derives what a media message carries besides the bytes:
// thumbnail, dimensions, duration, and for voice notes the waveform,
// converting audio to OGG/Opus with ffmpeg when one is configured.
//
// What decoding an image costs is judged from its header before anything is
// decoded, in the bytes the decoder will allocate (decodecost.go), and every
// decode, ffmpeg run and held download takes a slot of a pool shared fairly
// between users (pool.go, internal/fairpool).
//
// Nothing here trusts a client's claim about a file: mimetypes are detected
// from the content, and file names only refine a generic detection.
package media
