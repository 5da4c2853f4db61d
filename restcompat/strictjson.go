package restcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
)

// checkStrict walks the body once, beside the Go type t it will be decoded
// into, and refuses what encoding/json (v1) would let through: a key that
// matches a field only case-insensitively, a duplicate key (v1 keeps the
// last), invalid UTF-8 or half a surrogate pair (v1 turns both into U+FFFD
// without a word) and NUL, which no field of this API wants.
//
// It reports only its own refusals: a syntax error ends the walk quietly so
// that the decoder, which runs next, words it as it always has.
func checkStrict(body []byte, t reflect.Type) error {
	w := strictWalk{dec: json.NewDecoder(bytes.NewReader(body)), body: body}
	if err := w.value(t, "", 0); fault.From(err) != nil {
		return err
	}
	return nil
}

// maxDepth matches the nesting limit of encoding/json, which then refuses
// the body with its own message.
const maxDepth = 10000

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	errTooDeep      = errors.New("nested too deeply")
)

type strictWalk struct {
	dec  *json.Decoder
	body []byte
}

// next reads a token; for a string it also returns the literal as sent,
// quotes included, since the decoded string no longer shows what was wrong.
func (w *strictWalk) next() (json.Token, []byte, error) {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if _, ok := tok.(string); !ok {
		return tok, nil, nil
	}
	// Between start and the end of the token lie only blanks, ',' or ':'
	// and then the literal: its first quote is the literal's own.
	raw := w.body[start:w.dec.InputOffset()]
	return tok, raw[bytes.IndexByte(raw, '"'):], nil
}

// value walks one JSON value decoded into t; a nil t (an interface, a raw
// message, a custom unmarshaler, or a value of the wrong kind) is walked for
// keys and strings only.
func (w *strictWalk) value(t reflect.Type, path string, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(unmarshalerType) {
		t = nil
	}
	tok, raw, err := w.next()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t, path, depth)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for w.dec.More() {
			if err := w.value(elem, path, depth+1); err != nil {
				return err
			}
		}
		_, _, err := w.next()
		return err
	}
	if raw != nil {
		return checkString(raw, path, orBody(path))
	}
	return nil
}

func (w *strictWalk) object(t reflect.Type, path string, depth int) error {
	var fields []jsonField
	if t != nil && t.Kind() == reflect.Struct {
		fields = structFields(t)
	}
	seen := make(map[string]bool)
	for w.dec.More() {
		tok, raw, err := w.next()
		if err != nil {
			return err
		}
		if err := checkString(raw, path, "a key of "+orBody(path)); err != nil {
			return err
		}
		key := tok.(string)
		at := key
		if path != "" {
			at = path + "." + key
		}
		if seen[key] {
			return fault.InvalidField(at, "%s is given twice; each key may appear only once", shortPath(at))
		}
		seen[key] = true
		var vt reflect.Type
		switch {
		case fields != nil:
			f, ok := fieldNamed(fields, key)
			if !ok {
				return unknownField(fields, path, key)
			}
			vt = f.typ
		case t != nil && t.Kind() == reflect.Map:
			vt = t.Elem()
		}
		if err := w.value(vt, at, depth+1); err != nil {
			return err
		}
	}
	_, _, err := w.next()
	return err
}

// unknownField refuses a key that names no field exactly. A key that differs
// from a field only in case gets a hint, since encoding/json would have taken
// it for that field.
func unknownField(fields []jsonField, path, key string) error {
	at := key
	if path != "" {
		at = path + "." + key
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return fault.InvalidField(at, "unknown field %q; did you mean %q? Field names are case-sensitive", shortPath(at), f.name)
		}
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	of := "this request"
	if path != "" {
		of = shortPath(path)
	}
	return fault.InvalidField(at, "unknown field %q; the fields of %s are: %s", shortPath(at), of, strings.Join(names, ", "))
}

// checkString refuses a string literal that is not valid UTF-8, holds a NUL
// or escapes half of a surrogate pair. lit is the literal as sent, already
// known to be well-formed JSON; field is the path at fault and what names
// the string in the message.
func checkString(lit []byte, field, what string) error {
	what = shortPath(what)
	if !utf8.Valid(lit) {
		return fault.InvalidField(field, "%s must be valid UTF-8", what)
	}
	if bytes.IndexByte(lit, '\\') < 0 {
		return nil
	}
	for i := 1; i < len(lit)-1; i++ {
		if lit[i] != '\\' {
			continue
		}
		i++
		if lit[i] != 'u' {
			continue
		}
		r := hex4(lit[i+1:])
		i += 4
		switch {
		case r == 0:
			return fault.InvalidField(field, `%s must not contain NUL (\u0000)`, what)
		case utf16.IsSurrogate(r):
			// A high surrogate is valid only with a low one escaped at once after it.
			if r < 0xdc00 && i+7 < len(lit) && lit[i+1] == '\\' && lit[i+2] == 'u' {
				if lo := hex4(lit[i+3:]); lo >= 0xdc00 && lo <= 0xdfff {
					i += 6
					continue
				}
			}
			return fault.InvalidField(field, `%s must be valid Unicode: \u%04x is half of a surrogate pair`, what, r)
		}
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape; a malformed escape yields
// -1, which no rule above matches (the decoder refuses it anyway).
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// structFields lists the fields encoding/json decodes into a struct, by
// their exact names, in declaration order; untagged embedded structs are
// flattened as encoding/json does.
func structFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, structFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	return out
}

func fieldNamed(fields []jsonField, name string) (jsonField, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return jsonField{}, false
}

func orBody(path string) string {
	if path == "" {
		return "the request body"
	}
	return path
}

// shortPath keeps a path built from the client's keys short in a message.
func shortPath(p string) string { return fault.Clip(p, 64) }
