package restcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
)

// decodeBody reads a JSON request body into dst strictly: an unknown field,
// a wrong type, trailing data or a body over the limit is refused with a
// message naming the field. With optional set, an empty body counts as {}.
func decodeBody(r *http.Request, dst any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return fault.New(fault.Unsupported, "Content-Type must be application/json (got %q)", ct)
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fault.New(fault.TooLarge, "request body is larger than the limit of %s", humanBytes(tooLarge.Limit))
		}
		return fault.New(fault.Invalid, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return fault.New(fault.Invalid, "request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, dst)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fault.New(fault.Invalid, "request body must hold a single JSON value; found more after it")
	}
	return nil
}

func decodeError(err error, dst any) error {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return fault.New(fault.Invalid, "malformed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.New(fault.Invalid, "malformed JSON: the body ends in the middle of a value")
	case errors.As(err, &typeErr):
		want := jsonKind(typeErr.Type)
		if typeErr.Field == "" {
			return fault.New(fault.Invalid, "request body must be a JSON %s (got %s)", want, typeErr.Value)
		}
		return fault.InvalidField(typeErr.Field, "%s must be %s %s (got %s)", typeErr.Field, article(want), want, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return fault.InvalidField(name, "unknown field %q; the fields of this request are: %s", name, strings.Join(fieldNames(dst), ", "))
	default:
		return fault.New(fault.Invalid, "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// fieldNames lists the JSON fields a request body may have.
func fieldNames(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an"
	}
	return "a"
}

// queryInt reads an optional integer query parameter.
func queryInt(r *http.Request, name string) (*int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, fault.InvalidField(name, "%s must be a whole number (got %q)", name, truncate(v, 32))
	}
	return &n, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// jsonType names the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
