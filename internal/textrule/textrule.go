// Package textrule holds the rules about text that several places must
// apply alike.
//
// The one rule about text the service writes to its stores, the same on
// both backends: U+0000 (NUL) is never stored. PostgreSQL's text and jsonb
// refuse it where SQLite keeps it, so a NUL that reached the store would
// make an event, a message or a status unstorable on one backend only.
// Text from WhatsApp has its NUL replaced (Clean, CleanAll, CleanJSON);
// text from an API client is refused (Check), as REST's decoder already
// refuses it.
//
// The rule of names that must be told apart (session names, a poll's
// options; lookalike.go): they are compared by what they look like (Key)
// and refused when they could pass for another (CheckName).
package textrule

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
)

// Replacement is what a NUL from WhatsApp becomes: U+FFFD, Unicode's
// character for one that could not be kept. Dropping the NUL instead would
// hide that the text was altered and could make two different ids equal;
// the replacement keeps every character in its place and stays visible.
const Replacement = "\uFFFD"

// Check refuses a client's text holding a NUL, naming field. The message is
// REST's (restcompat), so both transports answer alike.
func Check(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fault.InvalidField(field, `%s must not contain NUL (\u0000)`, field)
	}
	return nil
}

// CheckValue applies Check to every string in v, a decoded argument
// (strings, lists, objects as maps, as encoding/json decodes into any;
// keys too), path naming where v sits: input.text, numbers[2]. Every
// transport that decodes arguments itself (GraphQL's, the MCP server's)
// refuses a NUL through it.
func CheckValue(path string, v any) error {
	switch v := v.(type) {
	case string:
		return Check(path, v)
	case []any:
		for i, e := range v {
			if err := CheckValue(path+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same field named first every time
		for _, k := range keys {
			if err := Check(path, k); err != nil {
				return err
			}
			if err := CheckValue(joinPath(path, k), v[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinPath names key k under path ("" is the top: the key alone).
func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Clean is s with every NUL replaced.
func Clean(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", Replacement)
}

// CleanJSON is JSON b (well-formed, as encoding/json writes it) with every
// escaped NUL (\u0000) in its strings replaced by \ufffd, and any raw NUL
// byte by U+FFFD. An escaped backslash followed by "u0000" is text, not a
// NUL, and is kept.
func CleanJSON(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, 0) < 0 {
		return b
	}
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case 0:
			out = append(append(out, b[last:i]...), Replacement...)
			last = i + 1
		case '\\':
			if i+5 < len(b) && b[i+1] == 'u' && string(b[i+2:i+6]) == "0000" {
				out = append(append(out, b[last:i]...), `\ufffd`...)
				last = i + 6
			}
			i++ // the escaped character is never the start of an escape
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// CleanAll replaces, in place, every NUL in the strings v reaches through
// exported fields, pointers, interfaces, slices, arrays and maps (keys and
// values), and in the JSON it holds as json.RawMessage. v is a pointer (or
// holds pointers): what is not addressable is left as it is. It is how an
// event's data from WhatsApp is made storable, whatever its type, so a new
// payload type needs no code here.
func CleanAll(v any) {
	cleanValue(reflect.ValueOf(v))
}

func cleanValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanValue(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanValue(v.Field(i))
			}
		}
	case reflect.String:
		if s := v.String(); v.CanSet() && strings.IndexByte(s, 0) >= 0 {
			v.SetString(Clean(s))
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if v.CanSet() && !v.IsNil() {
				v.SetBytes(CleanJSON(v.Bytes()))
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, not text
		}
		for i := range v.Len() {
			cleanValue(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			cleanValue(v.Index(i))
		}
	case reflect.Map:
		cleanMap(v)
	}
}

// cleanMap cleans a map's keys and values: its entries are not
// addressable, so each is copied, cleaned and put back.
func cleanMap(m reflect.Value) {
	if m.IsNil() {
		return
	}
	keys := m.MapKeys()
	for _, k := range keys {
		val := m.MapIndex(k)
		nv := reflect.New(val.Type()).Elem()
		nv.Set(val)
		cleanValue(nv)
		nk := k
		if k.Kind() == reflect.String && strings.IndexByte(k.String(), 0) >= 0 {
			nk = reflect.New(k.Type()).Elem()
			nk.SetString(Clean(k.String()))
			m.SetMapIndex(k, reflect.Value{})
		}
		m.SetMapIndex(nk, nv)
	}
}
