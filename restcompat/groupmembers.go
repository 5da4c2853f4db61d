package restcompat

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// participantsRequest is a bare array of the users a per-participant
// change names.
type participantsRequest []user

func (participantsRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinItems(1).WithMaxItems(1024).WithUniqueItems(true).
		WithDescription("The participants: 1 to 1024 users, numbers or user JIDs, each once.")
	return nil
}

type participantJSON struct {
	JID   string  `json:"jid" required:"true"`
	Phone string  `json:"phone" required:"true" description:"\"\" when WhatsApp hides it."`
	LID   *string `json:"lid" required:"true" description:"null when WhatsApp did not tell it."`
	Role  string  `json:"role" required:"true" enum:"member,admin,superadmin"`
}

// groupInfoJSON is a group as group(jid) answers it.
type groupInfoJSON struct {
	ID                    string            `json:"id" required:"true" description:"The group JID (…@g.us)."`
	Name                  string            `json:"name" required:"true"`
	Description           string            `json:"description" required:"true"`
	Participants          []participantJSON `json:"participants" required:"true"`
	OnlyAdminsCanPost     bool              `json:"onlyAdminsCanPost" required:"true"`
	OnlyAdminsCanEditInfo bool              `json:"onlyAdminsCanEditInfo" required:"true"`
	Owner                 *string           `json:"owner" required:"true" description:"The creator's JID; null when WhatsApp did not say."`
	CreatedAt             *time.Time        `json:"createdAt" required:"true"`
	ApprovalMode          bool              `json:"approvalMode" required:"true" description:"Admins approve who joins by link."`
	MemberAddMode         string            `json:"memberAddMode" required:"true" enum:"ADMINS,ALL"`
	EphemeralSeconds      int               `json:"ephemeralSeconds" required:"true" description:"The disappearing timer; 0 is off."`
	JoinRequestPending    bool              `json:"joinRequestPending" required:"true" description:"Set by join only: the request to join waits for the admins."`
}

func toGroupInfoJSON(g *model.Group) groupInfoJSON {
	out := groupInfoJSON{
		ID: g.ID, Name: g.Name, Description: g.Description, Participants: make([]participantJSON, len(g.Participants)),
		OnlyAdminsCanPost: g.OnlyAdminsCanPost, OnlyAdminsCanEditInfo: g.OnlyAdminsCanEditInfo, Owner: g.Owner,
		CreatedAt: g.CreatedAt, ApprovalMode: g.ApprovalMode, MemberAddMode: string(g.MemberAddMode),
		EphemeralSeconds: g.EphemeralSeconds, JoinRequestPending: g.JoinRequestPending,
	}
	for i, p := range g.Participants {
		out.Participants[i] = participantJSON{JID: p.Jid, Phone: p.Phone, LID: p.Lid, Role: p.Role}
	}
	return out
}

type inviteLinkJSON struct {
	Link string `json:"link" required:"true" description:"https://chat.whatsapp.com/<code>"`
}

type joinGroupRequest struct {
	Link string `json:"link" required:"true" description:"The invite link (https://chat.whatsapp.com/<code>) or its code." minLength:"1" maxLength:"128"`
}

type joinRequestJSON struct {
	JID         string    `json:"jid" required:"true"`
	Phone       *string   `json:"phone" required:"true"`
	LID         *string   `json:"lid" required:"true"`
	RequestedAt time.Time `json:"requestedAt" required:"true"`
}

// joinRequestsJSON is a list answer: one page, nextCursor always null.
type joinRequestsJSON struct {
	Status     string            `json:"status" required:"true" enum:"success"`
	Data       []joinRequestJSON `json:"data" required:"true"`
	NextCursor *string           `json:"nextCursor" required:"true"`
}

func (h *Handler) group(w http.ResponseWriter, r *http.Request) {
	g, err := h.q.Group(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"))
	switch {
	case err != nil:
		writeError(w, r, h.log, err)
	case g == nil:
		writeError(w, r, h.log, fault.New(fault.NotFound, "group %s not found", r.PathValue("jid")))
	default:
		ok(w, http.StatusOK, toGroupInfoJSON(g))
	}
}

// participantsHandler serves the per-participant change of GraphQL field
// id.
func participantsHandler(id string) func(*Handler, http.ResponseWriter, *http.Request, participantsRequest) {
	return func(h *Handler, w http.ResponseWriter, r *http.Request, numbers participantsRequest) {
		var change func(ctx context.Context, sessionID, jid string, participants []string) ([]*model.ParticipantResult, error)
		switch id {
		case "addGroupParticipants":
			change = h.m.AddGroupParticipants
		case "removeGroupParticipants":
			change = h.m.RemoveGroupParticipants
		case "promoteGroupParticipants":
			change = h.m.PromoteGroupParticipants
		case "approveGroupJoinRequests":
			change = h.m.ApproveGroupJoinRequests
		case "rejectGroupJoinRequests":
			change = h.m.RejectGroupJoinRequests
		default:
			writeError(w, r, h.log, fault.New(fault.Internal, "no participant change %s", id))
			return
		}
		res, err := change(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), toStrings(numbers))
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		writeOutcomes(w, res)
	}
}

func (h *Handler) groupInviteLink(w http.ResponseWriter, r *http.Request) {
	reset := false
	if v := r.URL.Query().Get("reset"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, r, h.log, fault.InvalidField("reset", "reset must be true or false (got %q)", fault.Clip(v, fault.QuoteLen)))
			return
		}
		reset = b
	}
	link, err := h.q.GroupInviteLink(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), &reset)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, inviteLinkJSON{Link: link})
}

// groupInviteInfo is served at group/{jid}/{code} (route.muxPath): only
// jid "invite", which no group id is, is this route.
func (h *Handler) groupInviteInfo(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("jid") != "invite" {
		writeJSON(w, http.StatusNotFound, failure{Status: "failed", Message: "no endpoint " + r.Method + " " + Prefix + r.URL.Path})
		return
	}
	g, err := h.q.GroupInviteInfo(r.Context(), r.PathValue("sessionId"), r.PathValue("code"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toGroupInfoJSON(g))
}

func (h *Handler) joinGroup(w http.ResponseWriter, r *http.Request, in joinGroupRequest) {
	g, err := h.m.JoinGroup(r.Context(), r.PathValue("sessionId"), in.Link)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toGroupInfoJSON(g))
}

func (h *Handler) leaveGroup(w http.ResponseWriter, r *http.Request) {
	if _, err := h.m.LeaveGroup(r.Context(), r.PathValue("sessionId"), r.PathValue("jid")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) groupJoinRequests(w http.ResponseWriter, r *http.Request) {
	reqs, err := h.q.GroupJoinRequests(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := joinRequestsJSON{Status: "success", Data: make([]joinRequestJSON, len(reqs))}
	for i, q := range reqs {
		out.Data[i] = joinRequestJSON{JID: q.Jid, Phone: q.Phone, LID: q.Lid, RequestedAt: q.RequestedAt}
	}
	writeJSON(w, http.StatusOK, out)
}
