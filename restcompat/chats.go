package restcompat

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/fault"
)

// The answers of the stored reads of chats, messages and contacts
// (surface.md section 2): lists as {"status","data","nextCursor"}.
type (
	chatJSON struct {
		JID           string       `json:"jid" required:"true" description:"A user by phone JID when known (else by LID), or a group JID."`
		Name          *string      `json:"name" required:"true" description:"The group's subject, or the contact's name (address book, else push name, else business name)."`
		IsGroup       bool         `json:"isGroup" required:"true"`
		Phone         *string      `json:"phone" required:"true" description:"A user's phone number (digits), when ever learned; null for groups."`
		LID           *string      `json:"lid" required:"true" description:"A user's LID (…@lid), when ever learned; null for groups."`
		UnreadCount   int          `json:"unreadCount" required:"true"`
		LastMessage   *messageJSON `json:"lastMessage" required:"true" description:"The newest stored message; null when none is stored."`
		LastMessageAt *string      `json:"lastMessageAt" required:"true" format:"date-time" description:"When the newest message was sent (RFC 3339); null when none is known."`
		Archived      bool         `json:"archived" required:"true"`
		Pinned        bool         `json:"pinned" required:"true"`
		MutedUntil    *string      `json:"mutedUntil" required:"true" format:"date-time" description:"When the mute ends (RFC 3339; year 9999 for a mute without end); null when not muted."`
	}
	contactJSON struct {
		JID          string  `json:"jid" required:"true" description:"By phone JID when known, else by LID."`
		Phone        *string `json:"phone" required:"true" description:"Digits, no +; null when never learned."`
		LID          *string `json:"lid" required:"true" description:"…@lid; null when never learned."`
		Name         *string `json:"name" required:"true" description:"The address book's name."`
		PushName     *string `json:"pushName" required:"true" description:"The name the person gave themselves."`
		BusinessName *string `json:"businessName" required:"true" description:"A verified business name."`
	}
	chatPage struct {
		Status     string     `json:"status" required:"true" const:"success"`
		Data       []chatJSON `json:"data" required:"true"`
		NextCursor *string    `json:"nextCursor" required:"true" description:"Pass as cursor for the next page; null on the last page."`
		_          struct{}   `description:"One page of chats, most recent first."`
	}
	messagePage struct {
		Status     string        `json:"status" required:"true" const:"success"`
		Data       []messageJSON `json:"data" required:"true"`
		NextCursor *string       `json:"nextCursor" required:"true" description:"Pass as before for the older messages; null on the last page."`
		_          struct{}      `description:"One page of a chat's messages, newest first."`
	}
	contactPage struct {
		Status     string        `json:"status" required:"true" const:"success"`
		Data       []contactJSON `json:"data" required:"true"`
		NextCursor *string       `json:"nextCursor" required:"true" description:"Pass as cursor for the next page; null on the last page."`
		_          struct{}      `description:"One page of contacts, by name."`
	}
)

func toChatJSON(c *model.Chat) chatJSON {
	out := chatJSON{JID: c.Jid, Name: c.Name, IsGroup: c.IsGroup, Phone: c.Phone, LID: c.Lid, UnreadCount: c.UnreadCount,
		LastMessageAt: optionalTime(c.LastMessageAt), Archived: c.Archived, Pinned: c.Pinned, MutedUntil: optionalTime(c.MutedUntil)}
	if c.LastMessage != nil {
		m := toMessageJSON(c.LastMessage)
		out.LastMessage = &m
	}
	return out
}

func toContactJSON(c *model.Contact) contactJSON {
	return contactJSON{JID: c.Jid, Phone: c.Phone, LID: c.Lid, Name: c.Name, PushName: c.PushName, BusinessName: c.BusinessName}
}

// nextCursor is a page's cursor for the next one; null on the last.
func nextCursor(p *model.PageInfo) *string {
	if !p.HasNextPage {
		return nil
	}
	return p.EndCursor
}

// restNames are the REST names of the arguments the resolvers name in
// their errors.
var restNames = map[string]string{"first": "limit", "after": "cursor", "jid": "chat"}

// inREST is err naming the REST parameter where the resolver named its
// GraphQL argument.
func inREST(err error) error {
	f := fault.From(err)
	if f == nil || f.Code != fault.Invalid {
		return err
	}
	name, ok := restNames[f.Field]
	if !ok {
		return err
	}
	c := *f
	c.Field = name
	c.Message = name + strings.TrimPrefix(f.Message, f.Field)
	return &c
}

// limitParam is the limit query parameter (1-100), nil when absent.
func limitParam(r *http.Request) (*int, error) {
	n, err := queryInt(r, "limit")
	if err != nil || n == nil {
		return nil, err
	}
	if *n < chats.MinPage || *n > chats.MaxPage {
		return nil, fault.InvalidField("limit", "limit must be between %d and %d (got %d)", chats.MinPage, chats.MaxPage, *n)
	}
	return n, nil
}

// boolParam is a true/false query parameter, nil when absent.
func boolParam(r *http.Request, name string) (*bool, error) {
	v, err := queryString(r, name)
	if err != nil || v == nil {
		return nil, err
	}
	b, err := strconv.ParseBool(*v)
	if err != nil || (*v != "true" && *v != "false") {
		return nil, fault.InvalidField(name, "%s must be true or false (got %q)", name, fault.Clip(*v, fault.QuoteLen))
	}
	return &b, nil
}

func (h *Handler) listChats(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r)
	var cursor *string
	var archived *bool
	if err == nil {
		cursor, err = queryString(r, "cursor")
	}
	if err == nil {
		archived, err = boolParam(r, "archived")
	}
	var res *model.ChatConnection
	if err == nil {
		res, err = h.q.Chats(r.Context(), r.PathValue("sessionId"), limit, cursor, archived, nil)
	}
	if err != nil {
		writeError(w, r, h.log, inREST(err))
		return
	}
	out := chatPage{Status: "success", Data: make([]chatJSON, len(res.Edges)), NextCursor: nextCursor(res.PageInfo)}
	for i, e := range res.Edges {
		out.Data[i] = toChatJSON(e.Node)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) getChat(w http.ResponseWriter, r *http.Request) {
	chat := r.PathValue("chat")
	c, err := h.q.Chat(r.Context(), r.PathValue("sessionId"), chat)
	if err == nil && c == nil {
		err = fault.New(fault.NotFound, "chat %s not found in session %s", fault.Clip(chat, fault.QuoteLen), r.PathValue("sessionId"))
	}
	if err != nil {
		writeError(w, r, h.log, inREST(err))
		return
	}
	ok(w, http.StatusOK, toChatJSON(c))
}

func (h *Handler) listMessages(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r)
	var before *string
	if err == nil {
		before, err = queryString(r, "before")
	}
	var res *model.MessageConnection
	if err == nil {
		res, err = h.q.Messages(r.Context(), r.PathValue("sessionId"), r.PathValue("chat"), limit, before)
	}
	if err != nil {
		writeError(w, r, h.log, inREST(err))
		return
	}
	out := messagePage{Status: "success", Data: make([]messageJSON, len(res.Edges)), NextCursor: nextCursor(res.PageInfo)}
	for i, e := range res.Edges {
		out.Data[i] = toMessageJSON(e.Node)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) listContacts(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r)
	var cursor, search *string
	if err == nil {
		cursor, err = queryString(r, "cursor")
	}
	if err == nil {
		search, err = queryString(r, "search")
	}
	var res *model.ContactConnection
	if err == nil {
		res, err = h.q.Contacts(r.Context(), r.PathValue("sessionId"), limit, cursor, search)
	}
	if err != nil {
		writeError(w, r, h.log, inREST(err))
		return
	}
	out := contactPage{Status: "success", Data: make([]contactJSON, len(res.Edges)), NextCursor: nextCursor(res.PageInfo)}
	for i, e := range res.Edges {
		out.Data[i] = toContactJSON(e.Node)
	}
	writeJSON(w, http.StatusOK, out)
}
