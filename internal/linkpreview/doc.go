// Package linkpreview makes the preview WhatsApp shows under a text that
// carries a link: title, description and a small JPEG thumbnail of the first
// http(s) URL in the text.
//
// A preview is a courtesy, never a reason to delay or fail a send: a Fetcher
// bounds the whole preview, thumbnail included, by one deadline (3 s by
// default), refuses at once rather than queue when its slots are busy, and
// reports every failure as an error the caller logs before sending without
// a preview. Its slots are shared between users (internal/fairpool): when
// they are busy and one user holds more than its share, that user's newest
// preview is cut short and its slot goes to the other's.
//
// The page is fetched on behalf of whoever wrote the text, so everything
// goes through the outbound address guard (internal/netguard): no loopback,
// private, link-local or metadata destination, redirects and the thumbnail
// image included, unless --allow-private-urls. What is read is bounded too:
// 512 KiB of HTML, stopping at </head>, and a 2 MiB image, decoded by the
// Decoder the Fetcher is given (media.Preparer): judged from its header by
// the bytes decoding it allocates (at most 32 MiB), decoded in one of the
// process's image decode slots. URLs may carry tokens in their query, so
// logs and errors name the host only, never the URL or the page's content.
package linkpreview
