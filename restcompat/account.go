package restcompat

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
)

type displayPictureRequest struct {
	Identifier string `json:"identifier" required:"true" description:"The session's own number, or a group id (400 for anything else)." minLength:"1"`
	Source     source `json:"source" required:"true" description:"A JPEG, PNG or WebP image (415 otherwise), as a URL or base64."`
}

type profileNameRequest struct {
	Name string   `json:"name" required:"true" description:"The new profile name, 1 to 25 characters." minLength:"1" maxLength:"25"`
	_    struct{} `description:"The account's new profile name."`
}

func (h *Handler) updateDisplayPicture(w http.ResponseWriter, r *http.Request, in displayPictureRequest) {
	if _, err := h.m.UpdateDisplayPicture(r.Context(), r.PathValue("sessionId"), in.Identifier, string(in.Source)); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) updateProfileName(w http.ResponseWriter, r *http.Request, in profileNameRequest) {
	if _, err := h.m.UpdateProfileName(r.Context(), r.PathValue("sessionId"), in.Name); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

// logoutResultJSON is the logout answer: a message, no data.
type logoutResultJSON struct {
	Status  string   `json:"status" required:"true" const:"success"`
	Message string   `json:"message" required:"true" examples:"[\"Session 3f2a… logged out\"]"`
	_       struct{} `description:"The answer of a logout: a message instead of data."`
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	if _, err := h.m.Logout(r.Context(), id); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, logoutResultJSON{Status: "success", Message: "Session " + id + " logged out"})
}

// privacyJSON is the seed's bare privacy object (callAdd is an addition).
type privacyJSON struct {
	LastSeen       string   `json:"lastSeen" required:"true"`
	Online         string   `json:"online" required:"true"`
	ProfilePicture string   `json:"profilePicture" required:"true"`
	Status         string   `json:"status" required:"true"`
	ReadReceipts   string   `json:"readReceipts" required:"true"`
	GroupsAdd      string   `json:"groupsAdd" required:"true"`
	CallAdd        string   `json:"callAdd"`
	_              struct{} `description:"The account's privacy settings. WhatsApp's values: all, contacts, contact_blacklist, none, match_last_seen, known. Extra keys (such as callAdd) may appear."`
}

func (h *Handler) getPrivacy(w http.ResponseWriter, r *http.Request) {
	p, err := h.q.Privacy(r.Context(), r.PathValue("sessionId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, privacyJSON{
		LastSeen: p.LastSeen, Online: p.Online, ProfilePicture: p.ProfilePicture, Status: p.Status,
		ReadReceipts: p.ReadReceipts, GroupsAdd: p.GroupsAdd, CallAdd: p.CallAdd,
	})
}

// The bodies of the privacy PUTs: one field each, decoded strictly like
// every other body.
type (
	disappearingModeRequest struct {
		Mode string `json:"mode" required:"true" description:"Default timer of new chats; THREE_MONTHS is an alias of NINETY_DAYS." enum:"OFF,ONE_DAY,ONE_WEEK,NINETY_DAYS,THREE_MONTHS"`
	}
	readReceiptsPrivacyRequest struct {
		Privacy string `json:"privacy" required:"true" description:"all: everybody sees read receipts; none: nobody (nor does the account see others')." enum:"all,none"`
	}
	groupsAddPrivacyRequest struct {
		Privacy string `json:"privacy" required:"true" description:"all: everybody; contacts: the account's contacts; contact_blacklist: contacts except those excluded on the phone; none: nobody." enum:"all,contacts,contact_blacklist,none"`
	}
	statusPrivacyRequest struct {
		Privacy string `json:"privacy" required:"true" description:"all: everybody; contacts: the account's contacts; contact_blacklist: contacts except those excluded on the phone; none: nobody." enum:"all,contacts,contact_blacklist,none"`
	}
)

func (b disappearingModeRequest) value() string    { return b.Mode }
func (b readReceiptsPrivacyRequest) value() string { return b.Privacy }
func (b groupsAddPrivacyRequest) value() string    { return b.Privacy }
func (b statusPrivacyRequest) value() string       { return b.Privacy }

// privacySetter serves one of the privacy PUTs: its body's one field is
// the value the mutation takes.
func privacySetter[B interface{ value() string }](set func(m graph.MutationResolver, ctx context.Context, sessionID, value string) (*model.PrivacySettings, error)) handling {
	return withBody(false, func(h *Handler, w http.ResponseWriter, r *http.Request, in B) {
		if _, err := set(h.m, r.Context(), r.PathValue("sessionId"), in.value()); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, empty{})
	})
}
