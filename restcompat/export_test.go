package restcompat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
)

// CheckAnswer decodes a success answer of the route serving method and
// path (relative to Prefix) strictly into the answer type its table entry
// declares: the golden scenarios hold every declared answer type, and so
// the document's answer schemas, to what the handlers really write.
func CheckAnswer(method, path string, body []byte) error {
	mux := http.NewServeMux()
	byPattern := map[string]route{}
	for _, rt := range routes() {
		mux.HandleFunc(rt.muxPattern(), func(http.ResponseWriter, *http.Request) {})
		byPattern[rt.muxPattern()] = rt
	}
	_, pattern := mux.Handler(httptest.NewRequest(method, path, nil))
	rt, ok := byPattern[pattern]
	if !ok {
		return fmt.Errorf("no route serves %s %s", method, path)
	}
	if rt.data == nil {
		return nil
	}
	if !rt.bare {
		var env struct {
			Status string          `json:"status"`
			Data   json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Status != "success" {
			return fmt.Errorf("%s: not a success envelope: %s", pattern, body)
		}
		body = env.Data
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	if err := decodeBody(r, reflect.New(reflect.TypeOf(rt.data)).Interface(), false); err != nil {
		return fmt.Errorf("%s: the answer is no %T: %w", pattern, rt.data, err)
	}
	return nil
}
