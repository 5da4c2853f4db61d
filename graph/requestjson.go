package graph

// The bound of a request's JSON (its variables, mostly) before gqlgen
// decodes it: gqlgen builds every value of it as a Go value (a []any of
// strings for a list of ids) before any resolver can refuse it, which for
// a body of tiny strings costs some 30 times the body. The document
// itself is bounded by DocumentLimits.Tokens.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// MaxRequestValues bounds the JSON values of one request: each item of a
// list and each member of an object counts one. The longest list an
// argument takes is 1024 users (mentions, participants): a request past
// the domain's own bound is still refused by the domain, naming the
// argument and its rule.
const MaxRequestValues = 10_000

// checkRequestJSON refuses data holding more than max values (data
// itself counts one), naming the path (variables.ids) of the value that
// passed the bound; root is data's own path ("variables" for a GET's
// parameter), "" for a request's whole JSON. It stops there: what it reads
// costs nothing that lasts. Malformed JSON is left to gqlgen, which words
// it.
func checkRequestJSON(data []byte, max int, root string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []jsonFrame
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if top := len(stack) - 1; top >= 0 && stack[top].wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:top]
				valueDone(stack)
				continue
			}
			stack[top].key, stack[top].wantKey = tok.(string), false
			continue
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone(stack)
			continue
		}
		if n++; n > max {
			var path []string
			if root != "" {
				path = append(path, root)
			}
			for _, f := range stack {
				if f.object {
					path = append(path, f.key)
				}
			}
			at := fault.Clip(strings.Join(path, "."), 64)
			if at == "" {
				at = "the request"
			}
			return fault.InvalidField(at, "%s: a GraphQL request may hold at most %d JSON values (each item of a list and each member of an object counts one); no operation takes as many", at, max)
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, jsonFrame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, jsonFrame{})
		default:
			valueDone(stack)
		}
	}
}

// jsonFrame is an object or a list open in checkRequestJSON's walk.
type jsonFrame struct {
	object  bool
	wantKey bool   // in an object: the next string is a key
	key     string // in an object: the key of the value being read
}

// valueDone notes that a value ended: in an object, a key comes next.
func valueDone(stack []jsonFrame) {
	if top := len(stack) - 1; top >= 0 && stack[top].object {
		stack[top].wantKey = true
	}
}

// boundRequestJSON refuses, with refuse, a request whose JSON holds more
// than MaxRequestValues values: a POST's body (read whole here, within
// the body limit around it, and handed on), a GET's variables and
// extensions. A body cut at its limit is refused as too large, as one
// announced larger is before it is read.
func boundRequestJSON(refuse func(http.ResponseWriter, *http.Request, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch r.Method {
		case http.MethodPost:
			var body []byte
			body, err = io.ReadAll(r.Body)
			var tooLarge *http.MaxBytesError
			switch {
			case errors.As(err, &tooLarge):
				w.Header().Set("Connection", "close")
				err = fault.New(fault.TooLarge, "request body is larger than the limit of %s", config.FormatSize(tooLarge.Limit))
			case err != nil:
				// gqlgen answers a body it could not read (one that
				// timed out, or whose client left).
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
				err = nil
			default:
				r.Body = io.NopCloser(bytes.NewReader(body))
				err = checkRequestJSON(body, MaxRequestValues, "")
			}
		case http.MethodGet:
			q := r.URL.Query()
			for _, name := range []string{"variables", "extensions"} {
				if err == nil && q.Get(name) != "" {
					err = checkRequestJSON([]byte(q.Get(name)), MaxRequestValues, name)
				}
			}
		}
		if err != nil {
			refuse(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
