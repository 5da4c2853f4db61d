package whatsapp

import (
	"fmt"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestCallMemory: only a ringing call offered to the session is claimed,
// by its caller's number or LID; a claim that could not be sent leaves it
// ringing; one that was, or an end WhatsApp told of, makes it CONFLICT;
// past maxCalls the oldest calls are forgotten.
func TestCallMemory(t *testing.T) {
	pn := types.NewJID("4915550000001", types.DefaultUserServer)
	lid := types.NewJID("200000000000001", types.HiddenUserServer)
	other := types.NewJID("4915550000002", types.DefaultUserServer)
	var c callMemory
	c.offered("RING", pn, lid)
	c.offered("ENDED", pn)
	c.end("ENDED", "terminate")
	c.offered("ANSWERED", pn)
	c.end("ANSWERED", "accept")
	c.end("NEVER", "terminate") // an end of a call never offered keeps it unknown

	for _, tt := range []struct {
		name, id string
		from     types.JID
		code     fault.Code
		field    string
	}{
		{"unknown", "NEVER", pn, fault.NotFound, "callId"},
		{"not the caller", "RING", other, fault.Invalid, "from"},
		{"ended", "ENDED", pn, fault.Conflict, "callId"},
		{"answered", "ANSWERED", pn, fault.Conflict, "callId"},
		{"by LID, a device of it", "RING", types.JID{User: lid.User, Server: lid.Server, Device: 3}, "", ""},
		{"again while it is being rejected", "RING", pn, fault.Conflict, "callId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := c.claim("s1", tt.id, tt.from)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e := fault.From(err); e == nil || e.Code != tt.code || e.Field != tt.field {
				t.Fatalf("claim: %v, want %s naming %s", err, tt.code, tt.field)
			}
		})
	}
	c.settle("RING", false) // the rejection could not be sent: it rings again
	if err := c.claim("s1", "RING", pn); err != nil {
		t.Fatalf("claim after a failed rejection: %v", err)
	}
	c.settle("RING", true)
	if e := fault.From(c.claim("s1", "RING", pn)); e == nil || e.Code != fault.Conflict {
		t.Fatalf("claim of a rejected call: %v, want CONFLICT", e)
	}

	for i := range maxCalls {
		c.offered(fmt.Sprintf("LATER%d", i), pn)
	}
	if e := fault.From(c.claim("s1", "RING", pn)); e == nil || e.Code != fault.NotFound {
		t.Errorf("the oldest call past %d: %v, want NOT_FOUND (forgotten)", maxCalls, e)
	}
	if err := c.claim("s1", fmt.Sprintf("LATER%d", maxCalls-1), pn); err != nil {
		t.Errorf("the newest call: %v", err)
	}
}
