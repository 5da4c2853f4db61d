package restcompat

import (
	"net/http"

	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/graph/model"
)

type createGroupRequest struct {
	Subject      string  `json:"subject" required:"true" description:"The group's name: not blank, at most 100 characters." minLength:"1" maxLength:"100" pattern:"\\S"`
	Description  *string `json:"description,omitempty" description:"At most 2048 characters." maxLength:"2048"`
	Participants []user  `json:"participants,omitempty" description:"Users to add: at most 1024, each once (400 on a repeat), numbers or user JIDs, not groups." maxItems:"1024" uniqueItems:"true"`
}

// ephemeralTimer is a group's disappearing timer in seconds. Its Enum lists
// the four WhatsApp offers as integers (an enum tag would list them as
// strings, which the document's linters refuse for an integer).
type ephemeralTimer int

// Enum is read by the OpenAPI generator (jsonschema-go).
func (ephemeralTimer) Enum() []any { return []any{0, 86400, 604800, 7776000} }

type updateGroupRequest struct {
	Subject               *string         `json:"subject,omitempty" description:"The group's name: not blank, at most 100 characters." minLength:"1" maxLength:"100" pattern:"\\S"`
	Description           *string         `json:"description,omitempty" description:"At most 2048 characters." maxLength:"2048"`
	OnlyAdminsCanPost     *bool           `json:"onlyAdminsCanPost,omitempty" description:"Only admins may send messages to the group."`
	OnlyAdminsCanEditInfo *bool           `json:"onlyAdminsCanEditInfo,omitempty" description:"Only admins may change the group's subject, description and picture."`
	ApprovalMode          *bool           `json:"approvalMode,omitempty" description:"Admins approve who joins by link."`
	MemberAddMode         *string         `json:"memberAddMode,omitempty" description:"Who may add members." enum:"ADMINS,ALL"`
	EphemeralSeconds      *ephemeralTimer `json:"ephemeralSeconds,omitempty" description:"The disappearing timer: 0 (off), 86400, 604800 or 7776000."`
	_                     struct{}        `description:"Only the given fields change."`
}

type sendGroupInviteRequest struct {
	Number  recipient `json:"number" required:"true" description:"Whom to send the invitation to."`
	Message string    `json:"message" nullable:"false" description:"Text sent before the invite link (may be empty), at most 4096 characters." maxLength:"4096"`
}

// demoteRequest is the seed's bare array of the admins to demote.
type demoteRequest []user

func (demoteRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinItems(1).WithMaxItems(1024).WithUniqueItems(true).
		WithDescription("The admins to demote: 1 to 1024 users, numbers or user JIDs, each once.")
	return nil
}

type groupJSON struct {
	ID          string `json:"id" required:"true" description:"The group JID (…@g.us)."`
	Name        string `json:"name" required:"true"`
	Description string `json:"description" required:"true"`
}

func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request, in createGroupRequest) {
	g, err := h.m.CreateGroup(r.Context(), r.PathValue("sessionId"), model.CreateGroupInput{
		Subject: in.Subject, Description: in.Description, Participants: toStrings(in.Participants)})
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, groupJSON{g.ID, g.Name, g.Description})
}

func (h *Handler) updateGroup(w http.ResponseWriter, r *http.Request, in updateGroupRequest) {
	u := model.UpdateGroupInput{
		Subject: in.Subject, Description: in.Description, OnlyAdminsCanPost: in.OnlyAdminsCanPost, OnlyAdminsCanEditInfo: in.OnlyAdminsCanEditInfo,
		ApprovalMode: in.ApprovalMode, EphemeralSeconds: (*int)(in.EphemeralSeconds)}
	if in.MemberAddMode != nil {
		m := model.MemberAddMode(*in.MemberAddMode)
		u.MemberAddMode = &m
	}
	if _, err := h.m.UpdateGroup(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), u); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) sendGroupInvite(w http.ResponseWriter, r *http.Request, in sendGroupInviteRequest) {
	res, err := h.m.SendGroupInvite(keyed(r), r.PathValue("sessionId"), r.PathValue("jid"), string(in.Number), in.Message, nil)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toSendJSON(res))
}

// participantOutcomeJSON is one participant's outcome of a demote.
type participantOutcomeJSON struct {
	Status  string `json:"status" required:"true" enum:"success,failed"`
	Code    *int   `json:"code,omitempty" description:"HTTP-like code of a failure (404: not a participant)."`
	Message string `json:"message,omitempty" description:"Why it failed."`
	// InviteLink is offered when the person's privacy settings refused an
	// add.
	InviteLink *string `json:"inviteLink,omitempty" description:"When the person's privacy settings refused an add: the group's invite link, to send them instead."`
}

// demoteOutcomeJSON is the seed's demote answer, without an envelope.
type demoteOutcomeJSON struct {
	Status map[string]participantOutcomeJSON `json:"status" required:"true" description:"Keyed by each number exactly as it was sent."`
	_      struct{}                          `description:"Demote answer (no envelope), e.g. {\"status\":{\"491701234567\":{\"status\":\"success\"},\"491709876543\":{\"status\":\"failed\",\"code\":404,\"message\":\"not a participant\"}}}."`
}

// demoteGroup answers 200 even when some participants failed, keyed by each
// number exactly as it was sent (the seed's shape, without an envelope).
func (h *Handler) demoteGroup(w http.ResponseWriter, r *http.Request, numbers demoteRequest) {
	res, err := h.m.DemoteGroupParticipants(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), toStrings(numbers))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeOutcomes(w, res)
}

// writeOutcomes answers a per-participant change: 200 even when some
// failed, keyed by each number exactly as it was sent, without an envelope.
func writeOutcomes(w http.ResponseWriter, res []*model.ParticipantResult) {
	out := make(map[string]participantOutcomeJSON, len(res))
	for _, p := range res {
		pj := participantOutcomeJSON{Status: "success"}
		if !p.Ok {
			pj = participantOutcomeJSON{Status: "failed", Code: p.Code, InviteLink: p.InviteLink}
			if p.Message != nil {
				pj.Message = *p.Message
			}
		}
		out[p.Participant] = pj
	}
	writeJSON(w, http.StatusOK, demoteOutcomeJSON{Status: out})
}
