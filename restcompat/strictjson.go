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

	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/internal/fault"
)

// checkStrict walks the body once, beside the Go type t it will be decoded
// into, and refuses what encoding/json (v1) would let through: a key that
// matches a field only case-insensitively, a duplicate key (v1 keeps the
// last), invalid UTF-8 or half a surrogate pair (v1 turns both into U+FFFD
// without a word) and NUL, which no field of this API wants. It also
// refuses a list longer than its declared maxItems (the tag, or the
// PrepareJSONSchema of its type: what the OpenAPI document says) before
// encoding/json builds it: a body of tiny strings would otherwise cost many
// times its size as a slice first.
//
// The walk reads the body in place: it copies no value, and allocates
// only for a key written with escapes and for the keys of an object,
// which it keeps to find a duplicate.
//
// It reports only its own refusals: a syntax error ends the walk quietly so
// that the decoder, which runs next, words it as it always has. end is
// where the body's first value ends, -1 when it could not be walked.
func checkStrict(body []byte, t reflect.Type) (end int, err error) {
	w := strictWalk{body: body}
	if err := w.value(t, "", 0, bound{}); err != nil {
		if fault.From(err) != nil {
			return -1, err
		}
		return -1, nil
	}
	return w.pos, nil
}

// maxDepth matches the nesting limit of encoding/json, which then refuses
// the body with its own message.
const maxDepth = 10000

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	preparerType    = reflect.TypeFor[jsonschema.Preparer]()
	errTooDeep      = errors.New("nested too deeply")
	errSyntax       = errors.New("malformed JSON") // worded by the decoder
)

type strictWalk struct {
	body []byte
	pos  int
}

// bound is the declared maxItems of a list; 0: none declared.
type bound struct{ maxItems int }

// skipSpace moves past blanks and returns the next byte, 0 at the end.
func (w *strictWalk) skipSpace() byte {
	for w.pos < len(w.body) {
		switch c := w.body[w.pos]; c {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return c
		}
	}
	return 0
}

// str moves past the string literal at pos and returns it as sent, quotes
// included, without unescaping it.
func (w *strictWalk) str() ([]byte, error) {
	start := w.pos
	for i := start + 1; i < len(w.body); i++ {
		switch c := w.body[i]; {
		case c == '"':
			w.pos = i + 1
			return w.body[start:w.pos], nil
		case c == '\\':
			i++
		case c < 0x20:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}

// literal moves past a number, true, false or null; the decoder checks
// its spelling.
func (w *strictWalk) literal() error {
	start := w.pos
	for w.pos < len(w.body) {
		c := w.body[w.pos]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.') {
			break
		}
		w.pos++
	}
	if w.pos == start {
		return errSyntax
	}
	return nil
}

// value walks one JSON value decoded into t; a nil t (an interface, a raw
// message, a custom unmarshaler, or a value of the wrong kind) is walked for
// keys and strings only. b is the field's own bound, if any.
func (w *strictWalk) value(t reflect.Type, path string, depth int, b bound) error {
	if depth > maxDepth {
		return errTooDeep
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil {
		if b.maxItems == 0 {
			b = typeBound(t)
		}
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			t = nil
		}
	}
	switch w.skipSpace() {
	case '{':
		w.pos++
		return w.object(t, path, depth)
	case '[':
		w.pos++
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return w.array(elem, path, depth, b)
	case '"':
		raw, err := w.str()
		if err != nil {
			return err
		}
		return checkString(raw, path, orBody(path))
	case 0:
		return errSyntax
	}
	return w.literal()
}

// array walks the items of a list whose '[' is read. Past its bound, the
// rest is only counted, so that the refusal says how many were sent.
func (w *strictWalk) array(elem reflect.Type, path string, depth int, b bound) error {
	if w.skipSpace() == ']' {
		w.pos++
		return nil
	}
	for n := 1; ; n++ {
		if b.maxItems > 0 && n > b.maxItems {
			return w.tooMany(path, depth, b.maxItems, n)
		}
		if err := w.value(elem, path, depth+1, bound{}); err != nil {
			return err
		}
		switch w.skipSpace() {
		case ',':
			w.pos++
		case ']':
			w.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

// tooMany counts the items of a list from its item n on, unchecked, and
// refuses it for holding more than max; a list that turns out malformed
// is left to the decoder.
func (w *strictWalk) tooMany(path string, depth, max, n int) error {
	for ; ; n++ {
		if err := w.skip(depth + 1); err != nil {
			return err
		}
		switch w.skipSpace() {
		case ',':
			w.pos++
		case ']':
			w.pos++
			if path == "" {
				return fault.New(fault.Invalid, "the request body must hold at most %d items (got %d)", max, n)
			}
			return fault.InvalidField(path, "%s must hold at most %d items (got %d)", shortPath(path), max, n)
		default:
			return errSyntax
		}
	}
}

// skip moves past one value, checking only its structure.
func (w *strictWalk) skip(depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	switch c := w.skipSpace(); c {
	case '"':
		_, err := w.str()
		return err
	case '{', '[':
		w.pos++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if w.skipSpace() == end {
			w.pos++
			return nil
		}
		for {
			if c == '{' {
				if w.skipSpace() != '"' {
					return errSyntax
				}
				if _, err := w.str(); err != nil {
					return err
				}
				if w.skipSpace() != ':' {
					return errSyntax
				}
				w.pos++
			}
			if err := w.skip(depth + 1); err != nil {
				return err
			}
			switch w.skipSpace() {
			case ',':
				w.pos++
			case end:
				w.pos++
				return nil
			default:
				return errSyntax
			}
		}
	case 0:
		return errSyntax
	}
	return w.literal()
}

func (w *strictWalk) object(t reflect.Type, path string, depth int) error {
	var fields []jsonField
	if t != nil && t.Kind() == reflect.Struct {
		fields = structFields(t)
	}
	if w.skipSpace() == '}' {
		w.pos++
		return nil
	}
	seen := make(map[string]bool)
	for {
		if w.skipSpace() != '"' {
			return errSyntax
		}
		raw, err := w.str()
		if err != nil {
			return err
		}
		if err := checkString(raw, path, "a key of "+orBody(path)); err != nil {
			return err
		}
		key, err := unquote(raw)
		if err != nil {
			return err
		}
		if w.skipSpace() != ':' {
			return errSyntax
		}
		w.pos++
		at := key
		if path != "" {
			at = path + "." + key
		}
		if seen[key] {
			return fault.InvalidField(at, "%s is given twice; each key may appear only once", shortPath(at))
		}
		seen[key] = true
		var (
			vt reflect.Type
			b  bound
		)
		switch {
		case fields != nil:
			f, ok := fieldNamed(fields, key)
			if !ok {
				return unknownField(fields, path, key)
			}
			vt, b = f.typ, f.bound
		case t != nil && t.Kind() == reflect.Map:
			vt = t.Elem()
		}
		if err := w.value(vt, at, depth+1, b); err != nil {
			return err
		}
		switch w.skipSpace() {
		case ',':
			w.pos++
		case '}':
			w.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

// unquote is a key as the decoder reads it: only a key written with
// escapes is decoded.
func unquote(raw []byte) (string, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

// typeBound is the maxItems a type declares for itself
// (PrepareJSONSchema), which the OpenAPI document shows.
func typeBound(t reflect.Type) bound {
	if t.Kind() != reflect.Slice && t.Kind() != reflect.Array || !t.Implements(preparerType) {
		return bound{}
	}
	var s jsonschema.Schema
	if err := reflect.Zero(t).Interface().(jsonschema.Preparer).PrepareJSONSchema(&s); err != nil || s.MaxItems == nil {
		return bound{}
	}
	return bound{maxItems: int(*s.MaxItems)}
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
	name  string
	typ   reflect.Type
	bound bound // its maxItems tag
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
		var b bound
		if n, err := strconv.Atoi(f.Tag.Get("maxItems")); err == nil {
			b.maxItems = n
		}
		out = append(out, jsonField{name: name, typ: f.Type, bound: b})
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
