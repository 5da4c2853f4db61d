package fault_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

var errRemote = errors.New("info query returned status 401: not-authorized")

// TestWrapKeepsTheCause: a wrapped fault shows only its message, and its
// cause stays reachable for the log through errors.Is, errors.As and Cause,
// also when the fault itself is wrapped with context.
func TestWrapKeepsTheCause(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		code  fault.Code
		cause error
	}{
		{"wrapped", fault.Wrap(errRemote, fault.WhatsAppRefused, "session %s could not %s", "s1", "read the group"), fault.WhatsAppRefused, errRemote},
		{"wrapped with context", fmt.Errorf("send: %w", fault.Wrap(errRemote, fault.WhatsAppError, "session s1 could not send")), fault.WhatsAppError, errRemote},
		{"new has no cause", fault.New(fault.NotFound, "session s1 not found"), fault.NotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fault.From(tt.err)
			if f == nil || f.Code != tt.code || fault.CodeOf(tt.err) != tt.code {
				t.Fatalf("From(%v) = %+v, want code %s", tt.err, f, tt.code)
			}
			if !errors.Is(f.Cause, tt.cause) || (tt.cause == nil) != (f.Cause == nil) {
				t.Errorf("cause %v, want %v", f.Cause, tt.cause)
			}
			if tt.cause != nil && !errors.Is(tt.err, tt.cause) {
				t.Errorf("errors.Is does not reach the cause through %v", tt.err)
			}
			if strings.Contains(f.Error(), "401") || f.Error() != f.Message {
				t.Errorf("Error() %q is not the client message %q alone", f.Error(), f.Message)
			}
		})
	}
}

func TestCodeOfUnclassified(t *testing.T) {
	if c := fault.CodeOf(errRemote); c != fault.Internal {
		t.Errorf("CodeOf(unclassified) = %s, want %s", c, fault.Internal)
	}
	if fault.From(errRemote) != nil {
		t.Error("From(unclassified) is not nil")
	}
}

func TestIsWhatsApp(t *testing.T) {
	for c, want := range map[fault.Code]bool{
		fault.WhatsAppRefused: true, fault.WhatsAppError: true, fault.WhatsAppTimeout: true,
		fault.Internal: false, fault.NotFound: false, fault.NotConnected: false, fault.Invalid: false,
	} {
		if got := fault.IsWhatsApp(c); got != want {
			t.Errorf("IsWhatsApp(%s) = %v, want %v", c, got, want)
		}
	}
}
