package sandbox_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// TestRequireClientVersion: both backends set the network's minimum, which
// its web page (read through the backend's HTTPClient) then advertises,
// and both refuse a malformed minimum naming the field.
func TestRequireClientVersion(t *testing.T) {
	l, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := httptest.NewServer(sandbox.Handler(l.Network(), nil))
	defer srv.Close()
	r, err := sandbox.Dial(context.Background(), srv.Listener.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tt := range []struct {
		name string
		b    sandbox.Network
		min  string
	}{{"local", l, "2.3000.2000000001"}, {"remote", r, "2.3000.2000000002"}} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := sandbox.Do(t.Context(), tt.b, sandbox.RequireClientVersion{Minimum: tt.min}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				get  func() (string, error)
			}{
				{"local page", func() (string, error) {
					v, err := whatsmeow.GetLatestVersion(t.Context(), l.HTTPClient())
					return v.String(), err
				}},
				{"remote page", func() (string, error) {
					v, err := whatsmeow.GetLatestVersion(t.Context(), r.HTTPClient())
					return v.String(), err
				}},
			} {
				if got, err := c.get(); err != nil || got != tt.min {
					t.Errorf("%s advertises %s (%v); want %s", c.name, got, err, tt.min)
				}
			}
			_, err := sandbox.Do(t.Context(), tt.b, sandbox.RequireClientVersion{Minimum: "soon"})
			if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != "minimum" {
				t.Errorf("malformed minimum: %v; want BAD_USER_INPUT on minimum", err)
			}
		})
	}
}
