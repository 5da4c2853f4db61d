// Package linkpreview makes the preview WhatsApp shows under a text that
// carries a link: title, description and a small JPEG thumbnail of the first
// http(s) URL in the text.
//
// A preview is a courtesy, never a reason to delay or fail a send: a Fetcher
// bounds the whole preview, thumbnail included, by one deadline (3 s by
// default), refuses at once rather than queue when its slots are busy, and
// reports every failure as an error the caller logs before sending without
// a preview.
//
// The page is fetched on behalf of whoever wrote the text, so everything
// goes through the outbound address guard (internal/netguard): no loopback,
// private, link-local or metadata destination, redirects and the thumbnail
// image included, unless --allow-private-urls. What is read is bounded too:
// 512 KiB of HTML, stopping at </head>, and a 2 MiB image whose dimensions
// are checked before it is decoded. URLs may carry tokens in their query, so
// logs and errors name the host only, never the URL or the page's content.
package linkpreview
