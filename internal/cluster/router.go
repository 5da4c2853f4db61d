package cluster

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// disconnectTimeout bounds a forwarded Disconnect, which has no context.
const disconnectTimeout = 30 * time.Second

// Router is the session manager as the API sees it in a cluster: each
// operation runs where the session runs. It has the manager's methods
// (graph.Linker, graph.GroupAdmin, graph.AccountAdmin, messaging.Sender).
type Router struct {
	node     *Node
	m        *whatsapp.Manager
	statuses StatusStore
	call     *caller
	ops      map[string]op
	seen     *seenCache // the nonces of the calls taken, for every handler
	log      *slog.Logger
}

// NewRouter returns the router of node over its manager m; statuses reads
// the stored records of sessions nobody runs. With t, calls to the other
// processes go over TLS (nil: plain HTTP, for a private network).
func NewRouter(node *Node, m *whatsapp.Manager, statuses StatusStore, t *TLS, log *slog.Logger) *Router {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Router{node: node, m: m, statuses: statuses, call: newCaller(node, t), seen: newSeenCache(maxSeen), log: log}
	r.ops = r.table()
	return r
}

// Handler serves the calls the other processes forward here; maxBody
// bounds a call (a send's media travels inside it).
func (r *Router) Handler(maxBody int64) http.Handler {
	return &callServer{node: r.node, ops: r.ops, maxBody: maxBody, seen: r.seen, log: r.log}
}

// none is the argument or result of an operation that has none.
type none struct{}

// The forwarded operations, by name.
const (
	opStatus          = "status"
	opConnect         = "connect"
	opPairPhone       = "pairPhone"
	opDisconnect      = "disconnect"
	opLogout          = "logout"
	opDelete          = "delete"
	opCreateGroup     = "createGroup"
	opGroups          = "groups"
	opUpdateGroup     = "updateGroup"
	opInviteLink      = "groupInviteLink"
	opDemote          = "demoteParticipants"
	opSetPicture      = "setPicture"
	opSetProfileName  = "setProfileName"
	opPrivacy         = "privacy"
	opSetPrivacy      = "setPrivacy"
	opSetDisappearing = "setDefaultDisappearingTimer"
	opSend            = "send"
	opRevoke          = "revoke"
	opDownload        = "download"
	opMediaRetry      = "requestMediaRetry"
)

// The arguments of the operations that take several.
type (
	createGroupArgs struct {
		Name, Description string
		Participants      []whatsapp.JID
	}
	updateGroupArgs struct {
		JID    whatsapp.JID
		Update whatsapp.GroupUpdate
	}
	demoteArgs struct {
		JID          whatsapp.JID
		Participants []whatsapp.JID
	}
	pictureArgs struct {
		Target whatsapp.JID
		JPEG   []byte
	}
	privacyArgs struct{ Setting, Value string }
	revokeArgs  struct {
		Chat      whatsapp.JID
		MessageID string
	}
)

// The operations as this process runs them, each in the shape both the
// Router's methods and the call server take.
func (r *Router) status(ctx context.Context, id string, _ none) (whatsapp.SessionState, error) {
	return r.m.Status(ctx, id)
}
func (r *Router) connect(ctx context.Context, id string, _ none) (none, error) {
	return none{}, r.m.Connect(ctx, id)
}
func (r *Router) pairPhone(ctx context.Context, id, number string) (string, error) {
	return r.m.PairPhone(ctx, id, number)
}
func (r *Router) disconnect(_ context.Context, id string, _ none) (none, error) {
	return none{}, r.m.Disconnect(id)
}
func (r *Router) logout(ctx context.Context, id string, _ none) (none, error) {
	return none{}, r.m.Logout(ctx, id)
}
func (r *Router) delete(ctx context.Context, id string, _ none) (none, error) {
	err := r.m.Delete(ctx, id)
	if ferr := r.node.forget(context.WithoutCancel(ctx), id); ferr != nil {
		r.log.Warn("removing the lease of a deleted session failed", "session_id", id, "err", ferr)
	}
	return none{}, err
}
func (r *Router) createGroup(ctx context.Context, id string, a createGroupArgs) (whatsapp.Group, error) {
	return r.m.CreateGroup(ctx, id, a.Name, a.Description, a.Participants)
}
func (r *Router) groups(ctx context.Context, id string, _ none) ([]whatsapp.Group, error) {
	return r.m.Groups(ctx, id)
}
func (r *Router) updateGroup(ctx context.Context, id string, a updateGroupArgs) (whatsapp.Group, error) {
	return r.m.UpdateGroup(ctx, id, a.JID, a.Update)
}
func (r *Router) inviteLink(ctx context.Context, id string, jid whatsapp.JID) (string, error) {
	return r.m.GroupInviteLink(ctx, id, jid)
}
func (r *Router) demote(ctx context.Context, id string, a demoteArgs) ([]whatsapp.ParticipantOutcome, error) {
	return r.m.DemoteParticipants(ctx, id, a.JID, a.Participants)
}
func (r *Router) setPicture(ctx context.Context, id string, a pictureArgs) (none, error) {
	return none{}, r.m.SetPicture(ctx, id, a.Target, a.JPEG)
}
func (r *Router) setProfileName(ctx context.Context, id, name string) (none, error) {
	return none{}, r.m.SetProfileName(ctx, id, name)
}
func (r *Router) privacy(ctx context.Context, id string, _ none) (whatsapp.Privacy, error) {
	return r.m.Privacy(ctx, id)
}
func (r *Router) setPrivacy(ctx context.Context, id string, a privacyArgs) (whatsapp.Privacy, error) {
	return r.m.SetPrivacy(ctx, id, a.Setting, a.Value)
}
func (r *Router) setDisappearing(ctx context.Context, id string, d time.Duration) (none, error) {
	return none{}, r.m.SetDefaultDisappearingTimer(ctx, id, d)
}
func (r *Router) send(ctx context.Context, id string, out whatsapp.Outgoing) (whatsapp.Sent, error) {
	return r.m.Send(ctx, id, out)
}
func (r *Router) revoke(ctx context.Context, id string, a revokeArgs) (whatsapp.Sent, error) {
	return r.m.Revoke(ctx, id, a.Chat, a.MessageID)
}
func (r *Router) download(ctx context.Context, id string, ref whatsapp.MediaRef) ([]byte, error) {
	return r.m.Download(ctx, id, ref)
}
func (r *Router) mediaRetry(ctx context.Context, id string, msg whatsapp.Message) (none, error) {
	return none{}, r.m.RequestMediaRetry(ctx, id, msg)
}

func (r *Router) table() map[string]op {
	return map[string]op{
		opStatus: opOf(r.status), opConnect: opOf(r.connect), opPairPhone: opOf(r.pairPhone),
		opDisconnect: opOf(r.disconnect), opLogout: opOf(r.logout), opDelete: opOf(r.delete),
		opCreateGroup: opOf(r.createGroup), opGroups: opOf(r.groups), opUpdateGroup: opOf(r.updateGroup),
		opInviteLink: opOf(r.inviteLink), opDemote: opOf(r.demote), opSetPicture: opOf(r.setPicture),
		opSetProfileName: opOf(r.setProfileName), opPrivacy: opOf(r.privacy), opSetPrivacy: opOf(r.setPrivacy),
		opSetDisappearing: opOf(r.setDisappearing), opSend: opOf(r.send), opRevoke: opOf(r.revoke),
		opDownload: opOf(r.download), opMediaRetry: opOf(r.mediaRetry),
	}
}

// where says who runs the session: this process (local), or h. With claim,
// a session nobody holds is taken here first (an operation on it cannot
// wait for the next rebalance); without, ErrNoHolder says nobody runs it.
func (r *Router) where(ctx context.Context, id string, claim bool) (local bool, h Holder, err error) {
	if r.node.Holds(id) {
		return true, Holder{}, nil
	}
	h, err = r.node.HolderOf(ctx, id)
	switch {
	case err == nil:
		return h.Self, h, nil
	case !errors.Is(err, ErrNoHolder) || !claim:
		return false, Holder{}, err
	}
	took, err := r.node.Claim(ctx, id)
	if err != nil {
		return false, Holder{}, err
	}
	if took {
		return true, Holder{}, nil
	}
	// Another process took it meanwhile, or the session does not exist.
	h, err = r.node.HolderOf(ctx, id)
	if errors.Is(err, ErrNoHolder) {
		return false, Holder{}, fault.New(fault.NotFound, "session %s not found", id)
	}
	return err == nil && h.Self, h, err
}

// run runs one operation where the session runs: here, or forwarded to its
// holder; a holder that let go of it meanwhile is read again, once.
func run[A, R any](ctx context.Context, r *Router, id, name string, a A, local func(context.Context, string, A) (R, error)) (R, error) {
	var res R
	for attempt := 0; ; attempt++ {
		loc, h, err := r.where(ctx, id, true)
		if err != nil {
			return res, err
		}
		if loc {
			return local(ctx, id, a)
		}
		err = r.call.do(ctx, h, id, name, a, &res)
		if !errors.Is(err, errMoved) {
			return res, err
		}
		if attempt > 0 {
			return res, fault.New(fault.NotConnected, "session %s is moving to another process: try again in a moment", id)
		}
	}
}

// Status returns the session's state from the process running it; when
// none does (or it does not answer), the stored record says what is known.
func (r *Router) Status(ctx context.Context, id string) (whatsapp.SessionState, error) {
	loc, h, err := r.where(ctx, id, false)
	switch {
	case err == nil && loc:
		return r.m.Status(ctx, id)
	case err == nil:
		var st whatsapp.SessionState
		err = r.call.do(ctx, h, id, opStatus, none{}, &st)
		if err == nil || (fault.From(err) != nil && fault.CodeOf(err) != fault.NotConnected) {
			return st, err
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if !errors.Is(err, errMoved) && fault.From(err) == nil {
			r.log.Warn("reading a session's state from its holder failed: answering from the stored record", "session_id", id, "holder", h.Node, "err", err)
		}
	case !errors.Is(err, ErrNoHolder):
		return whatsapp.SessionState{}, err
	}
	rec, found, err := r.statuses.LoadStatus(ctx, id)
	if err != nil {
		return whatsapp.SessionState{}, err
	}
	if !found {
		return whatsapp.SessionState{}, fault.New(fault.NotFound, "session %s not found", id)
	}
	st := whatsapp.StoredState(rec)
	if rec.Status != whatsapp.StatusDisconnected && rec.Status != whatsapp.StatusLoggedOut && rec.Status != "" {
		st.Reason = "no process of the cluster runs it at the moment: one takes it over shortly"
	}
	return st, nil
}

// Connect starts the session where it runs.
func (r *Router) Connect(ctx context.Context, id string) error {
	_, err := run(ctx, r, id, opConnect, none{}, r.connect)
	return err
}

// PairPhone asks for a pairing code where the session runs.
func (r *Router) PairPhone(ctx context.Context, id, number string) (string, error) {
	return run(ctx, r, id, opPairPhone, number, r.pairPhone)
}

// Disconnect closes the session's connection where it runs.
func (r *Router) Disconnect(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), disconnectTimeout)
	defer cancel()
	_, err := run(ctx, r, id, opDisconnect, none{}, r.disconnect)
	return err
}

// Logout unlinks the device where the session runs.
func (r *Router) Logout(ctx context.Context, id string) error {
	_, err := run(ctx, r, id, opLogout, none{}, r.logout)
	return err
}

// Delete forgets a deleted session where it runs, which unlinks its device
// and removes its lease. Its record is gone already, so nobody may take it:
// a session nobody runs is forgotten here.
func (r *Router) Delete(ctx context.Context, id string) error {
	loc, h, err := r.where(ctx, id, false)
	switch {
	case err == nil && !loc:
		err = r.call.do(ctx, h, id, opDelete, none{}, nil)
		if !errors.Is(err, errMoved) && fault.CodeOf(err) != fault.NotConnected {
			return err
		}
		r.log.Warn("the process running a deleted session did not forget it: forgetting it here", "session_id", id, "err", err)
	case err != nil && !errors.Is(err, ErrNoHolder):
		return err
	}
	_, err = r.delete(ctx, id, none{})
	return err
}

// CreateGroup creates a group where the session runs.
func (r *Router) CreateGroup(ctx context.Context, id, name, description string, participants []whatsapp.JID) (whatsapp.Group, error) {
	return run(ctx, r, id, opCreateGroup, createGroupArgs{Name: name, Description: description, Participants: participants}, r.createGroup)
}

// Groups lists the account's groups where the session runs.
func (r *Router) Groups(ctx context.Context, id string) ([]whatsapp.Group, error) {
	return run(ctx, r, id, opGroups, none{}, r.groups)
}

// UpdateGroup changes a group where the session runs.
func (r *Router) UpdateGroup(ctx context.Context, id string, jid whatsapp.JID, u whatsapp.GroupUpdate) (whatsapp.Group, error) {
	return run(ctx, r, id, opUpdateGroup, updateGroupArgs{JID: jid, Update: u}, r.updateGroup)
}

// GroupInviteLink returns a group's invite link where the session runs.
func (r *Router) GroupInviteLink(ctx context.Context, id string, jid whatsapp.JID) (string, error) {
	return run(ctx, r, id, opInviteLink, jid, r.inviteLink)
}

// DemoteParticipants demotes group admins where the session runs.
func (r *Router) DemoteParticipants(ctx context.Context, id string, jid whatsapp.JID, participants []whatsapp.JID) ([]whatsapp.ParticipantOutcome, error) {
	return run(ctx, r, id, opDemote, demoteArgs{JID: jid, Participants: participants}, r.demote)
}

// SetPicture sets a profile picture where the session runs.
func (r *Router) SetPicture(ctx context.Context, id string, target whatsapp.JID, jpeg []byte) error {
	_, err := run(ctx, r, id, opSetPicture, pictureArgs{Target: target, JPEG: jpeg}, r.setPicture)
	return err
}

// SetProfileName sets the account's name where the session runs.
func (r *Router) SetProfileName(ctx context.Context, id, name string) error {
	_, err := run(ctx, r, id, opSetProfileName, name, r.setProfileName)
	return err
}

// Privacy reads the privacy settings where the session runs.
func (r *Router) Privacy(ctx context.Context, id string) (whatsapp.Privacy, error) {
	return run(ctx, r, id, opPrivacy, none{}, r.privacy)
}

// SetPrivacy changes a privacy setting where the session runs.
func (r *Router) SetPrivacy(ctx context.Context, id, setting, value string) (whatsapp.Privacy, error) {
	return run(ctx, r, id, opSetPrivacy, privacyArgs{Setting: setting, Value: value}, r.setPrivacy)
}

// SetDefaultDisappearingTimer sets the timer where the session runs.
func (r *Router) SetDefaultDisappearingTimer(ctx context.Context, id string, d time.Duration) error {
	_, err := run(ctx, r, id, opSetDisappearing, d, r.setDisappearing)
	return err
}

// Send sends a message where the session runs.
func (r *Router) Send(ctx context.Context, id string, out whatsapp.Outgoing) (whatsapp.Sent, error) {
	return run(ctx, r, id, opSend, out, r.send)
}

// Revoke deletes a message for everyone where the session runs.
func (r *Router) Revoke(ctx context.Context, id string, chat whatsapp.JID, messageID string) (whatsapp.Sent, error) {
	return run(ctx, r, id, opRevoke, revokeArgs{Chat: chat, MessageID: messageID}, r.revoke)
}

// Download downloads a message's media where the session runs.
func (r *Router) Download(ctx context.Context, id string, ref whatsapp.MediaRef) ([]byte, error) {
	return run(ctx, r, id, opDownload, ref, r.download)
}

// RequestMediaRetry asks the phone to upload media again where the session runs.
func (r *Router) RequestMediaRetry(ctx context.Context, id string, msg whatsapp.Message) error {
	_, err := run(ctx, r, id, opMediaRetry, msg, r.mediaRetry)
	return err
}
