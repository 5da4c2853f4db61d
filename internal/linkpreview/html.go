package linkpreview

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	// maxHTMLBytes is how much of a page is read: the head of any sane page
	// fits, and a page that hides its tags deeper gets no preview.
	maxHTMLBytes        = 512 << 10
	maxTitleRunes       = 256
	maxDescriptionRunes = 1024
	// sniffBytes is how far a <meta charset> is looked for, as browsers do.
	sniffBytes = 1024
)

// pageMeta is what a page says about itself, normalized.
type pageMeta struct {
	title, description string
	image              string // as written: may be relative
	url                string // og:url as written
}

// fetchPage GETs u and reads its metadata. final is the URL the fetch ended
// at, after redirects.
func (f *Fetcher) fetchPage(ctx context.Context, u *url.URL) (meta pageMeta, final *url.URL, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return meta, nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
	resp, err := f.do(req)
	if err != nil {
		return meta, nil, fmt.Errorf("fetch: %w", err)
	}
	// Closing before the end drops the connection, which is the point: the
	// rest of a large page is never transferred.
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return meta, nil, statusError(resp.StatusCode)
	}
	body := bufio.NewReaderSize(io.LimitReader(resp.Body, maxHTMLBytes), sniffBytes)
	head, _ := body.Peek(sniffBytes) // fewer bytes at the end of a short page
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "" {
		// The sniffer's charset is a guess, not a declaration: drop it and
		// let decodeCharset make its own.
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(head))
		params = nil
	}
	if mt != "text/html" && mt != "application/xhtml+xml" {
		return meta, nil, fmt.Errorf("%w: content type %.64s", ErrNotHTML, mt)
	}
	text, strict := decodeCharset(params["charset"], head, body)
	meta, readErr := parseHead(text, strict)
	if meta.title == "" && meta.description == "" {
		if ctx.Err() != nil {
			// The read failed because the deadline closed the connection:
			// say that, not "use of closed network connection".
			return meta, nil, fmt.Errorf("read: %w", ctx.Err())
		}
		if readErr != nil {
			return meta, nil, fmt.Errorf("read: %w", readErr)
		}
		return meta, nil, ErrNoMetadata
	}
	return meta, resp.Request.URL, nil
}

// parseHead reads the page's metadata, stopping at the end of its head once
// something was found. OpenGraph comes first, then Twitter's cards, then
// plain HTML's <title> and description. strict drops a value that is not
// UTF-8 instead of patching it: the page's charset could not be decoded, so
// such a value would be mojibake. err is a read error other than EOF.
func parseHead(r io.Reader, strict bool) (meta pageMeta, err error) {
	var og, twitter, plain pageMeta
	var title strings.Builder
	inTitle, svgDepth := false, 0
	z := html.NewTokenizer(r)
	done := func() pageMeta {
		plain.title = title.String()
		clean := func(s string, n int) string { return normalize(s, n, strict) }
		return pageMeta{
			title:       firstNonEmpty(clean(og.title, maxTitleRunes), clean(twitter.title, maxTitleRunes), clean(plain.title, maxTitleRunes)),
			description: firstNonEmpty(clean(og.description, maxDescriptionRunes), clean(twitter.description, maxDescriptionRunes), clean(plain.description, maxDescriptionRunes)),
			image:       firstNonEmpty(cleanRef(og.image, strict), cleanRef(twitter.image, strict)),
			url:         cleanRef(og.url, strict),
		}
	}
	found := func() bool {
		return og.title != "" || og.description != "" || twitter.title != "" ||
			twitter.description != "" || title.Len() > 0 || plain.description != ""
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if e := z.Err(); !errors.Is(e, io.EOF) {
				err = e
			}
			return done(), err
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch atom.Lookup(name) {
			case atom.Meta:
				if hasAttr {
					readMeta(z, &og, &twitter, &plain)
				}
			case atom.Title:
				// An <svg> has <title>s of its own, and only the first
				// document title counts.
				inTitle = tt == html.StartTagToken && svgDepth == 0 && title.Len() == 0
			case atom.Svg:
				if tt == html.StartTagToken {
					svgDepth++
				}
			case atom.Body:
				if found() {
					return done(), nil
				}
			}
		case html.TextToken:
			if inTitle && title.Len() < 4*maxTitleRunes*utf8.UTFMax {
				title.Write(z.Text())
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Title:
				inTitle = false
			case atom.Svg:
				svgDepth = max(0, svgDepth-1)
			case atom.Head:
				if found() {
					return done(), nil
				}
			}
		}
	}
}

// readMeta files a <meta>'s content under what its property or name says;
// the first value of each kind wins, as for the crawlers pages are written
// for.
func readMeta(z *html.Tokenizer, og, twitter, plain *pageMeta) {
	var key, content string
	haveContent := false
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "property", "name":
			if key == "" {
				key = strings.ToLower(strings.TrimSpace(string(v)))
			}
		case "content":
			content, haveContent = string(v), true
		}
	}
	if !haveContent {
		return
	}
	set := func(dst *string) {
		if *dst == "" {
			*dst = content
		}
	}
	switch key {
	case "og:title":
		set(&og.title)
	case "og:description":
		set(&og.description)
	case "og:image", "og:image:url", "og:image:secure_url":
		set(&og.image)
	case "og:url":
		set(&og.url)
	case "twitter:title":
		set(&twitter.title)
	case "twitter:description":
		set(&twitter.description)
	case "twitter:image", "twitter:image:src":
		set(&twitter.image)
	case "description":
		set(&plain.description)
	}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// normalize turns a value into one line of at most n runes: whitespace and
// control characters collapse to single spaces, and a cut value ends in an
// ellipsis so that it does not read as complete.
func normalize(s string, n int, strict bool) string {
	if !utf8.ValidString(s) {
		if strict {
			return ""
		}
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
			break
		}
		count++
	}
	return strings.TrimRightFunc(s[:cut], unicode.IsSpace) + "…"
}

// cleanRef trims a URL-valued attribute; a URL is used whole or not at all.
func cleanRef(s string, strict bool) string {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) && strict {
		return ""
	}
	if len(s) > 4096 {
		return ""
	}
	return s
}

// decodeCharset returns the page as UTF-8 as far as it can: UTF-8 is read
// as is, and windows-1252, the web's default and what every "latin1" label
// means to a browser, is converted. header is the Content-Type's charset,
// head the page's first bytes. strict reports a declared charset it cannot
// convert, whose values are then kept only when they happen to be UTF-8
// (plain ASCII, typically).
func decodeCharset(header string, head []byte, body io.Reader) (r io.Reader, strict bool) {
	label := strings.ToLower(strings.TrimSpace(header))
	switch {
	case bytes.HasPrefix(head, []byte("\xEF\xBB\xBF")):
		label = "utf-8"
	case bytes.HasPrefix(head, []byte("\xFE\xFF")), bytes.HasPrefix(head, []byte("\xFF\xFE")):
		label = "utf-16"
	case label == "":
		label = metaCharset(head)
	}
	switch label {
	case "utf-8", "utf8", "unicode-1-1-utf-8":
		return body, false
	case "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1",
		"cp819", "ibm819", "iso-ir-100", "csisolatin1", "us-ascii", "ascii", "ansi_x3.4-1968":
		return newCP1252Reader(body), false
	case "":
		if looksUTF8(head) {
			return body, false
		}
		return newCP1252Reader(body), false
	}
	return body, true
}

// metaCharset finds a charset declared in the page's first bytes, in
// <meta charset="..."> or <meta http-equiv content="...; charset=...">,
// the way a browser's prescan does, only looser.
func metaCharset(head []byte) string {
	lower := bytes.ToLower(head)
	for i := 0; ; {
		j := bytes.Index(lower[i:], []byte("charset"))
		if j < 0 {
			return ""
		}
		rest := bytes.TrimLeft(lower[i+j+len("charset"):], " \t\r\n")
		i += j + 1
		if len(rest) == 0 || rest[0] != '=' {
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n\"'")
		end := bytes.IndexFunc(rest, func(r rune) bool {
			return !(r == '-' || r == '_' || r == ':' || r == '.' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'))
		})
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			return string(rest[:end])
		}
	}
}

// looksUTF8 says head is UTF-8, forgiving a rune cut at its end.
func looksUTF8(head []byte) bool {
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			return len(head) < utf8.UTFMax && !utf8.FullRune(head)
		}
		head = head[size:]
	}
	return true
}

// cp1252High is what windows-1252 puts at 0x80-0x9F; the five holes map to
// the C1 controls, as browsers do. Latin-1 takes 0xA0-0xFF as they are.
const cp1252High = "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ"

// cp1252Reader converts windows-1252 to UTF-8 as the tokenizer reads, so
// that entities (already UTF-8 once unescaped) and raw bytes do not mix.
type cp1252Reader struct {
	r    io.Reader
	high []rune
	in   [512]byte
	out  []byte // converted, not yet read
	err  error
}

func newCP1252Reader(r io.Reader) *cp1252Reader {
	return &cp1252Reader{r: r, high: []rune(cp1252High)}
}

func (c *cp1252Reader) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		var n int
		n, c.err = c.r.Read(c.in[:])
		buf := c.out[:0]
		for _, b := range c.in[:n] {
			switch {
			case b < 0x80:
				buf = append(buf, b)
			case b < 0xA0:
				buf = utf8.AppendRune(buf, c.high[b-0x80])
			default:
				buf = utf8.AppendRune(buf, rune(b))
			}
		}
		c.out = buf
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}
