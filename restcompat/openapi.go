package restcompat

import (
	_ "embed"
	"io"
	"net/http"
	"strconv"
)

// openAPIDocument is the OpenAPI 3.1 description of this contract, as
// Document generates it from the route table (make generate writes the
// file; a test holds the two equal, make check-generated the commit).
//
//go:embed openapi.json
var openAPIDocument string

// OpenAPI serves the OpenAPI description (GET /api/v1/openapi.json). It needs
// no authentication: the document holds no data of any user.
func OpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, failure{Status: "failed",
				Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: GET, HEAD"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
		// net/http drops the body of a HEAD answer itself.
		_, _ = io.WriteString(w, openAPIDocument)
	})
}
