package wafake

import (
	"encoding/json"
	"fmt"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// WhatsApp's GraphQL: an IQ of namespace w:mex carries <query query_id> with
// {"variables": …} as JSON and is answered <result>{"data": …, "errors":
// […]}</result>. whatsmeow turns a non-empty "errors" into an error.

// mexSetAbout is the mutation whatsmeow's SetStatusMessage sends
// (mutationUpdateTextStatus, user.go).
const mexSetAbout = "9152604461510864"

// MaxAbout is WhatsApp's limit for the about text, in characters.
const MaxAbout = 139

type mexError struct {
	Message    string `json:"message"`
	Extensions struct {
		ErrorCode int    `json:"error_code"`
		Severity  string `json:"severity"`
	} `json:"extensions"`
}

type mexResponse struct {
	Data   any        `json:"data"`
	Errors []mexError `json:"errors,omitempty"`
}

// handleMex answers the GraphQL queries the network knows; any other is a
// GraphQL error, as the real server gives for an unknown query id.
func (n *Network) handleMex(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	q, ok := node.GetOptionalChildByTag("query")
	body, isBytes := q.Content.([]byte)
	if !ok || !isBytes {
		return nil, &iqError{400, "bad-request"}
	}
	var resp mexResponse
	switch id := q.AttrGetter().OptionalString("query_id"); id {
	case mexSetAbout:
		resp = n.setAbout(c, body)
	default:
		resp = mexFailure(400, fmt.Sprintf("unknown query %s", id))
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return nil, &iqError{500, "internal-server-error"}
	}
	return []waBinary.Node{{Tag: "result", Content: out}}, nil
}

// setAbout stores the "about" text (whatsmeow's SetStatusMessage).
func (n *Network) setAbout(c *conn, body []byte) mexResponse {
	var req struct {
		Variables struct {
			Input struct {
				Text *string `json:"text"`
			} `json:"input"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Variables.Input.Text == nil {
		return mexFailure(400, "input.text is required")
	}
	text := *req.Variables.Input.Text
	if len([]rune(text)) > MaxAbout {
		return mexFailure(406, fmt.Sprintf("input.text is longer than %d characters", MaxAbout))
	}
	n.mu.Lock()
	c.dev.acct.state.about = text
	n.mu.Unlock()
	n.announceAbout(c.dev.acct, text)
	return mexResponse{Data: map[string]any{"xwa2_text_status_update": map[string]any{"text": text}}}
}

func mexFailure(code int, msg string) mexResponse {
	e := mexError{Message: msg}
	e.Extensions.ErrorCode, e.Extensions.Severity = code, "CRITICAL"
	return mexResponse{Errors: []mexError{e}}
}
