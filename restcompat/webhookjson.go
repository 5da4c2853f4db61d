package restcompat

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// The webhook list's answer is written by hand rather than by reflection:
// encoding/json was a tenth of the list's cost. Its bytes are those
// writeJSON gives (encoding/json without HTML escaping, a newline at the
// end), which webhookjson_test.go checks against encoding/json itself.

// appendJSON appends the page as writeJSON would encode it.
func (p webhookPage) appendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = appendJSONString(b, p.Status)
	b = append(b, `,"data":[`...)
	for i := range p.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.Data[i].appendJSON(b)
	}
	b = append(b, `],"page":`...)
	b = appendJSONString(b, p.Page)
	b = append(b, `,"pageSize":`...)
	b = appendJSONString(b, p.PageSize)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(p.Total), 10)
	return append(b, "}\n"...)
}

// appendJSON appends the webhook as encoding/json would encode it.
func (w *webhookJSON) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, w.ID)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, w.URL)
	b = append(b, `,"displayName":`...)
	b = appendJSONString(b, w.DisplayName)
	b = append(b, `,"enabled":`...)
	b = strconv.AppendBool(b, w.Enabled)
	b = append(b, `,"events":`...)
	b = w.Events.appendJSON(b)
	b = append(b, `,"headers":`...)
	if w.Headers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		keys := make([]string, 0, len(w.Headers))
		for k := range w.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, w.Headers[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"createdAt":`...)
	b = appendJSONString(b, string(w.CreatedAt))
	b = append(b, `,"waSessionId":`...)
	b = appendJSONString(b, w.WaSessionID)
	return append(b, '}')
}

// appendJSON appends the selection's object: all 27 keys, in contract
// order.
func (s webhookEvents) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range selectionKeys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k.prefix...)
		b = strconv.AppendBool(b, slices.Contains(s, k.enum))
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping off: '"', '\\' and control characters escaped, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
