package mcpserver

import "testing"

// TestArgumentOf: the field an API error names is the tool's argument.
func TestArgumentOf(t *testing.T) {
	s := spec{args: map[string]string{"number": "to", "first": "limit"}}
	for field, want := range map[string]string{
		"input.number": "to", "number": "to", "first": "limit", "input.text": "text",
		"numbers[2]": "numbers[2]", "input.contact.name": "contact.name", "sessionId": "sessionId",
	} {
		if got := argumentOf(s, field); got != want {
			t.Errorf("argumentOf(%q) = %q, want %q", field, got, want)
		}
	}
}
