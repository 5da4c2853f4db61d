package restcompat

import (
	"math"
	"net/http"

	"github.com/swaggest/openapi-go/openapi31"
)

// route is one operation of the contract: how it is served and how it is
// described, in one entry. The router (New) and the OpenAPI document
// (Document) are both made from the table, so a route cannot be served
// undescribed, and a body described is the body decoded.
type route struct {
	method, path string // path relative to Prefix, with its {parameters}
	// muxPath, when set, is the path the mux serves the route at, where
	// path would conflict with another route's in ServeMux (GET
	// group/invite/{code} and group/{jid}/requests match a path both):
	// the handler then checks what path fixes (see groupInviteInfo).
	muxPath     string
	id          string // operationId: the GraphQL field it calls
	tag         string
	summary     string
	description string
	params      []param // in path order, then query and header ones

	handling // how it is served, and the request body type it decodes

	// maxBody is the most its request body may hold, sized to what the
	// contract lets the body carry: 0 is fieldsBody; mediaBody is
	// --max-body, for a source sent inline. --max-body caps every route.
	// A body announced larger is refused with 413 before it is read; one
	// sent without a length is cut there (413 too).
	maxBody int64

	// bodyExample is a request body in JSON (bodyExamples when it takes
	// several shapes); a test decodes each into the body type strictly.
	bodyExample  string
	bodyExamples []namedExample

	status int    // of the success
	answer string // what the success means
	// data is a value of the success's type: the data of the
	// {"status":"success","data":…} envelope, or the whole answer when
	// bare. nil: the answer is not JSON (see describe).
	data        any
	bare        bool
	dataExample string // JSON of data; a test decodes it into data's type strictly
	// failures are the statuses it may fail with beyond those every route
	// or every body may (see failuresOf).
	failures []int
	// describe adds what the table has no field for: the non-JSON answers.
	describe func(*openapi31.Response)
}

type namedExample struct{ name, summary, json string }

// handling is a handler with the type of the body it decodes.
type handling struct {
	serve func(h *Handler, w http.ResponseWriter, r *http.Request)
	// body is a zero value of the request body's type; nil: no body.
	body any
	// optional: an empty body counts as {}.
	optional bool
}

// noBody serves a route that takes no body.
func noBody(serve func(h *Handler, w http.ResponseWriter, r *http.Request)) handling {
	return handling{serve: serve}
}

// withBody serves a route whose body is a B, decoded strictly before
// serve runs: the type the document describes is the type decoded.
func withBody[B any](optional bool, serve func(h *Handler, w http.ResponseWriter, r *http.Request, in B)) handling {
	var zero B
	return handling{body: zero, optional: optional, serve: func(h *Handler, w http.ResponseWriter, r *http.Request) {
		var in B
		if err := decodeBody(r, &in, optional); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		serve(h, w, r, in)
	}}
}

// The body limits of the table. Each holds the largest body its routes'
// rules allow written the longest way a client may write it: every
// character outside ASCII escaped (JSON encoders' "ensure ASCII"), which
// is 12 bytes for an emoji (\ud83d\ude00).
const (
	// fieldsBody: a few fields, the longest of them a group invite's
	// message of 4096 characters (48 KiB escaped).
	fieldsBody int64 = 64 << 10
	// listBody: markRead's 1000 ids of up to 128 bytes, a group's 1024
	// participants, a webhook's 32 headers of up to 4096 bytes.
	listBody int64 = 512 << 10
	// textBody: a text of 65536 characters (768 KiB escaped) with its
	// 1024 mentions.
	textBody int64 = 1 << 20
	// mediaBody: --max-body, for the media a send carries inline
	// (base64).
	mediaBody int64 = -1
)

// bodyLimit is the route's limit with --max-body (maxBody; 0: none
// configured, the media routes then have no limit of their own).
func (rt route) bodyLimit(maxBody int64) int64 {
	limit := rt.maxBody
	switch limit {
	case 0:
		limit = fieldsBody
	case mediaBody:
		limit = math.MaxInt64
	}
	if maxBody > 0 {
		limit = min(limit, maxBody)
	}
	return limit
}

// pattern is the route's ServeMux pattern, relative to Prefix.
func (rt route) pattern() string { return rt.method + " " + rt.path }

// muxPattern is what the mux serves the route at: pattern, or muxPath's.
func (rt route) muxPattern() string {
	if rt.muxPath != "" {
		return rt.method + " " + rt.muxPath
	}
	return rt.pattern()
}

// routes is the table, by area.
func routes() []route {
	var all []route
	for _, area := range [][]route{sessionRoutes(), settingsRoutes(), passkeyRoutes(), messageRoutes(), conversationRoutes(), chatRoutes(), groupRoutes(), groupMemberRoutes(),
		accountRoutes(), privacyRoutes(), lookupRoutes(), webhookRoutes(), limitsRoutes(), historyRoutes()} {
		all = append(all, area...)
	}
	return all
}
