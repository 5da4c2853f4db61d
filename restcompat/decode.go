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

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// decodeBody reads a JSON request body into dst strictly: an unknown field
// (names are case-sensitive), a duplicate key, a string that is not valid
// UTF-8 or holds a NUL, a wrong type, a number out of range, trailing data
// or a body over the limit is refused with a message naming the field and
// quoting at most a short prefix of the value. With optional set, an empty
// body counts as {}.
func decodeBody(r *http.Request, dst any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return fault.New(fault.Unsupported, "Content-Type must be application/json (got %q)", ct)
		}
	}
	body, err := readBody(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fault.New(fault.TooLarge, "request body is larger than the limit of %s", config.FormatSize(tooLarge.Limit))
		}
		return fault.New(fault.Invalid, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return fault.New(fault.Invalid, "request body is empty: send a JSON object")
	}
	end, err := checkStrict(body, reflect.TypeOf(dst))
	if err != nil {
		return err
	}
	// The walk found where the value ends: it is decoded from the body in
	// place (a json.Decoder would copy the body into a buffer of its own
	// first), and whatever follows it is refused after its own faults, as
	// a decoder reading one value would.
	value := body
	if end >= 0 {
		value = body[:end]
	}
	if err := json.Unmarshal(value, dst); err != nil {
		return decodeError(err)
	}
	if len(bytes.TrimSpace(body[len(value):])) != 0 {
		return fault.New(fault.Invalid, "request body must hold a single JSON value; found more after it")
	}
	return nil
}

// readBody reads the whole body. An announced length is read into a slice
// of that size at once, without the copies of a growing buffer: the
// server reads no more than it, and the route's limit (New) refused it
// when it was larger.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(r.Body)
}

func decodeError(err error) error {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input":
		return fault.New(fault.Invalid, "malformed JSON: the body ends in the middle of a value")
	case errors.As(err, &syntax):
		return fault.New(fault.Invalid, "malformed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typeErr):
		field := shortPath(typeErr.Field)
		// "number <literal>" is a number that does not fit the field: too
		// large, or a fraction for an integer. The literal may be huge.
		if lit, ok := strings.CutPrefix(typeErr.Value, "number "); ok && field != "" {
			return fault.InvalidField(typeErr.Field, "%s must be %s (got %s)", field, numberRule(typeErr.Type), fault.Clip(lit, fault.QuoteLen))
		}
		want := jsonKind(typeErr.Type)
		got := fault.Clip(typeErr.Value, fault.QuoteLen)
		if field == "" {
			return fault.New(fault.Invalid, "request body must be a JSON %s (got %s)", want, got)
		}
		return fault.InvalidField(typeErr.Field, "%s must be %s %s (got %s)", field, article(want), want, got)
	default:
		return fault.New(fault.Invalid, "malformed JSON: %s", fault.Clip(strings.TrimPrefix(err.Error(), "json: "), 200))
	}
}

// numberRule is the range a number must be in to fit t.
func numberRule(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		hi := int64(^uint64(0) >> (65 - t.Bits()))
		return fmt.Sprintf("a whole number between %d and %d", -hi-1, hi)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number between 0 and %d", ^uint64(0)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("a number within the range of a %d-bit float", t.Bits())
	default:
		return "a " + jsonKind(t)
	}
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

// queryString returns a query parameter given at most once (nil: absent or
// empty).
func queryString(r *http.Request, name string) (*string, error) {
	vs := r.URL.Query()[name]
	switch {
	case len(vs) == 0 || len(vs) == 1 && vs[0] == "":
		return nil, nil
	case len(vs) > 1:
		return nil, fault.InvalidField(name, "%s is given %d times; give it once", name, len(vs))
	}
	return &vs[0], nil
}

// queryInt reads an optional integer query parameter, given at most once.
// Its range is the resolver's to check, so that GraphQL agrees.
func queryInt(r *http.Request, name string) (*int, error) {
	v, err := queryString(r, name)
	if v == nil || err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(*v)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return nil, fault.InvalidField(name, "%s is out of range (got %q)", name, fault.Clip(*v, fault.QuoteLen))
	case err != nil:
		return nil, fault.InvalidField(name, "%s must be a whole number (got %q)", name, fault.Clip(*v, fault.QuoteLen))
	}
	return &n, nil
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
