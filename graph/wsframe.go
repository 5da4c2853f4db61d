package graph

import (
	"encoding/json"
	"reflect"
)

// maxKeptFrame is the largest frame buffer a websocket keeps for its next
// result: a rare large result is not held for the connection's life.
const maxKeptFrame = 64 << 10

// appendResult appends the websocket frame of a subscription result ("next"
// of graphql-transport-ws, "data" of graphql-ws) gqlgen hands the
// connection, and reports false for any other message (json encodes
// those). gqlgen's message is a struct of its own holding the result
// already encoded (json.Marshal of the response) as a json.RawMessage;
// encoding/json would scan and compact those bytes again, for every
// subscriber of every event, which made up a tenth of the server's CPU
// under a fan-out to 1,000 subscribers (BENCHMARKS.md, goal 4). So the
// frame is written around the payload as it is. The struct's shape is
// checked field by field (names, types and json tags), so that a gqlgen
// whose message changed falls back to encoding/json rather than writing
// something else. rename, when not nil, turns gqlgen's id into the
// client's (opIDs).
func appendResult(buf []byte, v any, rename func(string) string) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, false
	}
	rv = rv.Elem()
	if rv.Kind() != reflect.Struct {
		return nil, false
	}
	var (
		payload        json.RawMessage
		id, typ        string
		seen, expected = 0, 3
	)
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		switch {
		case f.Name == "Payload" && tag == "payload,omitempty" && f.Type == reflect.TypeFor[json.RawMessage]():
			payload = rv.Field(i).Interface().(json.RawMessage)
		case f.Name == "ID" && tag == "id,omitempty" && f.Type.Kind() == reflect.String:
			id = rv.Field(i).String()
		case f.Name == "Type" && tag == "type" && f.Type.Kind() == reflect.String:
			typ = rv.Field(i).String()
		default:
			return nil, false
		}
		seen++
	}
	if seen != expected || (typ != "next" && typ != "data") || len(payload) == 0 {
		return nil, false
	}
	if rename != nil {
		id = rename(id)
	}
	if !plainString(id) {
		return nil, false
	}
	// The order of encoding/json (the struct's field order), so that the
	// bytes are the same either way.
	buf = append(buf, `{"payload":`...)
	buf = append(buf, payload...)
	if id != "" {
		buf = append(buf, `,"id":"`...)
		buf = append(buf, id...)
		buf = append(buf, '"')
	}
	buf = append(buf, `,"type":"`...)
	buf = append(buf, typ...)
	buf = append(buf, `"}`...)
	return buf, true
}

// plainString reports whether s is written in JSON as it is between quotes:
// printable ASCII without a quote, a backslash or a character encoding/json
// escapes for HTML (the client chooses the subscription's id).
func plainString(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
