package restcompat

import (
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/lookup"
)

type (
	checkNumbersRequest struct {
		Numbers []user `json:"numbers" required:"true" description:"The numbers to check: phone numbers or user JIDs, 1 to 50." minItems:"1" maxItems:"50"`
	}
	identitiesRequest struct {
		IDs []user `json:"ids" required:"true" description:"Phone numbers, user JIDs or LIDs, 1 to 50." minItems:"1" maxItems:"50"`
	}
	numberCheckJSON struct {
		Number     string  `json:"number" required:"true" description:"The number as given."`
		OnWhatsApp bool    `json:"onWhatsApp" required:"true"`
		JID        *string `json:"jid" required:"true" description:"The account's phone JID, WhatsApp's canonical form of the number; null when not on WhatsApp."`
		LID        *string `json:"lid" required:"true" description:"The account's LID; null when not on WhatsApp or not told."`
		IsBusiness bool    `json:"isBusiness" required:"true" description:"A business account."`
	}
	userInfoJSON struct {
		JID          *string  `json:"jid" required:"true" description:"The phone JID; null when only the LID is known."`
		Phone        *string  `json:"phone" required:"true" description:"The number, digits only; null when only the LID is known."`
		LID          *string  `json:"lid" required:"true" description:"The LID; null when WhatsApp did not tell."`
		About        *string  `json:"about" required:"true" description:"The about text; null when empty."`
		PictureID    *string  `json:"pictureId" required:"true" description:"The profile picture's id; null when none, or hidden from this account."`
		Devices      []string `json:"devices" required:"true" description:"The phone and its linked devices, as JIDs."`
		BusinessName *string  `json:"businessName" required:"true" description:"A business's name as the session learned it from WhatsApp; null when not a business."`
		VerifiedName *string  `json:"verifiedName" required:"true" description:"The name of a business's verified name certificate; null when not a business, or asked by a LID whose number is not known."`
	}
	profilePictureJSON struct {
		ID  string `json:"id" required:"true" description:"The picture's id (userInfo's pictureId)."`
		URL string `json:"url" required:"true" description:"The picture's address on WhatsApp's servers."`
	}
	blocklistJSON struct {
		Status     string         `json:"status" required:"true" const:"success"`
		Data       []identityJSON `json:"data" required:"true" description:"The blocked users; input is the user's JID (by phone when known), as jid."`
		NextCursor *string        `json:"nextCursor" required:"true" description:"Always null: the whole list is one page."`
	}
)

func (h *Handler) checkNumbers(w http.ResponseWriter, r *http.Request, in checkNumbersRequest) {
	checks, err := h.q.CheckNumbers(r.Context(), r.PathValue("sessionId"), toStrings(in.Numbers))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := make([]numberCheckJSON, len(checks))
	for i, c := range checks {
		out[i] = numberCheckJSON{Number: c.Number, OnWhatsApp: c.OnWhatsApp, JID: c.Jid, LID: c.Lid, IsBusiness: c.IsBusiness}
	}
	ok(w, http.StatusOK, out)
}

func (h *Handler) userInfo(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("number")
	u, err := h.q.UserInfo(r.Context(), r.PathValue("sessionId"), number)
	if err == nil && u == nil {
		err = fault.New(fault.NotFound, "%s is not on WhatsApp", fault.Clip(number, fault.QuoteLen))
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, userInfoJSON{
		JID: u.Jid, Phone: u.Phone, LID: u.Lid, About: u.About, PictureID: u.PictureID, Devices: u.Devices,
		BusinessName: u.BusinessName, VerifiedName: u.VerifiedName,
	})
}

func (h *Handler) profilePicture(w http.ResponseWriter, r *http.Request) {
	id, chat := r.PathValue("sessionId"), r.PathValue("chat")
	preview, err := queryBool(r, "preview")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if wantsJPEG(r) {
		if h.media == nil {
			writeError(w, r, h.log, errNoMediaSource)
			return
		}
		jpeg, err := h.media.ProfilePictureJPEG(r.Context(), id, chat, preview)
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("Content-Length", strconv.Itoa(len(jpeg)))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "private, no-store")
		_, _ = w.Write(jpeg)
		return
	}
	p, err := h.q.ProfilePicture(r.Context(), id, chat, &preview)
	if err == nil && p == nil {
		err = lookup.NoPicture(chat)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, profilePictureJSON{ID: p.ID, URL: p.URL})
}

func (h *Handler) identities(w http.ResponseWriter, r *http.Request, in identitiesRequest) {
	ids, err := h.q.Identities(r.Context(), r.PathValue("sessionId"), toStrings(in.IDs))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toIdentitiesJSON(ids))
}

func (h *Handler) blocklist(w http.ResponseWriter, r *http.Request) {
	list, err := h.q.Blocklist(r.Context(), r.PathValue("sessionId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, blocklistJSON{Status: "success", Data: toIdentitiesJSON(list)})
}

func (h *Handler) block(w http.ResponseWriter, r *http.Request) {
	h.setBlocked(w, r, h.m.Block)
}

func (h *Handler) unblock(w http.ResponseWriter, r *http.Request) {
	h.setBlocked(w, r, h.m.Unblock)
}

func (h *Handler) setBlocked(w http.ResponseWriter, r *http.Request, call func(ctx context.Context, sessionID, number string) (bool, error)) {
	if _, err := call(r.Context(), r.PathValue("sessionId"), r.PathValue("number")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func toIdentitiesJSON(ids []*model.Identity) []identityJSON {
	out := make([]identityJSON, len(ids))
	for i, p := range ids {
		out[i] = identityJSON{Input: p.Input, JID: p.Jid, Phone: p.Phone, LID: p.Lid}
	}
	return out
}

// queryBool reads an optional true/false query parameter, given at most
// once; absent is false.
func queryBool(r *http.Request, name string) (bool, error) {
	v, err := queryString(r, name)
	if v == nil || err != nil {
		return false, err
	}
	switch *v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fault.InvalidField(name, "%s must be true or false (got %q)", name, fault.Clip(*v, fault.QuoteLen))
}

// wantsJPEG reports whether the Accept header prefers image/jpeg to JSON.
func wantsJPEG(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "image/jpeg", "image/*":
			return true
		case "application/json":
			return false
		}
	}
	return false
}
