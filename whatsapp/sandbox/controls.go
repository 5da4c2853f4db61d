package sandbox

import (
	"context"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Every control is one Control value, built by the control() method of its
// request type; the table below lists them. Local, Remote and the control
// API all go through that value, so a control's name, checks and
// behaviour exist once, and a new control is a request type, its
// control() and a line in the table.

// Control is one operation of the control surface: its name (the control
// API serves it as POST /v1/<name>), the checks its request must pass, and
// what it does to a network in this process.
type Control[Req, Res any] struct {
	name string
	// check refuses bad input with the fault naming the field, before
	// anything crosses the wire or touches the network; Local, Remote and
	// the control API all run it.
	check func(Req) error
	// run acts on the network; req has passed check.
	run func(ctx context.Context, n *wafake.Network, log *slog.Logger, req Req) (Res, error)
}

// Request is the request of a control: its type says which control it is
// and what the control answers (Res).
type Request[Req, Res any] interface {
	control() Control[Req, Res]
}

// Network is the control surface of a simulated network: a *Local, or a
// *Remote reaching one in another process. Do runs a control on it.
type Network interface {
	// call runs c with *req, which passed c's checks, and stores the
	// result in *res.
	call(ctx context.Context, c op, req, res any) error
}

// Do runs the control of req on n: the same checks and the same faults,
// whichever network n is. The result is the zero Res when it fails.
func Do[Req Request[Req, Res], Res any](ctx context.Context, n Network, req Req) (Res, error) {
	return req.control().do(ctx, n, req)
}

// Done is the answer of a control that answers nothing but success.
type Done struct{}

// Sent is the answer of a control that sent one message: its id.
type Sent struct {
	ID string `json:"id"`
}

// op is a Control with its types erased, as the table holds it.
type op interface {
	path() string
	// exec runs the control on n: req is a *Req that passed the checks,
	// res a *Res.
	exec(ctx context.Context, n *wafake.Network, log *slog.Logger, req, res any) error
	// serve answers the control API's POSTs of the control by running
	// them on n (control.go).
	serve(n Network, log *slog.Logger) http.HandlerFunc
}

// controls is the table the control API serves; every control is listed
// once.
func controls() []op {
	return []op{
		LinkDevice{}.control(),
		EnterPairingCode{}.control(),
		RequirePasskey{}.control(),
		PasskeyAssertion{}.control(),
		Inbox{}.control(),
		Media{}.control(),
		SendText{}.control(),
		SendImage{}.control(),
		SendBurst{}.control(),
		React{}.control(),
		Receipt{}.control(),
		Presence{}.control(),
		Call{}.control(),
		Vote{}.control(),
		Edit{}.control(),
		Revoke{}.control(),
		Group{}.control(),
		RequestJoin{}.control(),
		Account{}.control(),
		SetProfile{}.control(),
		DropConnection{}.control(),
		RemoveDevice{}.control(),
		RequireClientVersion{}.control(),
		ReachoutTimelock{}.control(),
	}
}

func (c Control[Req, Res]) path() string { return "/v1/" + c.name }

func (c Control[Req, Res]) do(ctx context.Context, n Network, req Req) (Res, error) {
	var res Res
	if err := c.check(req); err != nil {
		return res, err
	}
	if err := n.call(ctx, c, &req, &res); err != nil {
		// A run may answer part of a result with its error (a burst cut
		// short), which the control API does not carry: none, so that a
		// Local fails as a Remote does.
		return *new(Res), err
	}
	return res, nil
}

func (c Control[Req, Res]) exec(ctx context.Context, n *wafake.Network, log *slog.Logger, req, res any) error {
	out, err := c.run(ctx, n, log, *req.(*Req))
	*res.(*Res) = out
	return err
}

// first is the first error of checks run in order: a request is refused
// for its first bad field.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checked is a JID that the control's check has read already.
func checked(s string) types.JID {
	jid, _ := types.ParseJID(s)
	return jid
}
