// Package webui serves the pages wagraph offers people, from files embedded
// in the binary: nothing is fetched from elsewhere, so they work on a
// machine without internet. For now that is GraphiQL at / (issue 13 adds
// the dashboard under /ui/).
//
// GraphiQL is a pinned dependency whose built files are committed under
// static/graphiql, with their licenses: graphiql 3.8.3 (graphiql.min.js,
// graphiql.min.css), react 18.3.1 and react-dom 18.3.1 (their UMD
// production builds), taken from `npm pack graphiql@3.8.3 react@18.3.1
// react-dom@18.3.1`. Their SHA-256 sums are in webui_test.go: a change of
// version changes them there too. index.html, page.css and init.js are
// wagraph's.
//
// Every answer carries a Content-Security-Policy that lets the page run
// only scripts of this origin (no inline script), talk only to this origin,
// and never be framed.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is the policy of every page and file served here.
// GraphiQL sets styles from its scripts (style-src 'unsafe-inline'); its
// stylesheet carries its fonts and icons as data: URLs.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// GraphiQL serves GraphiQL's page at / and its files under /graphiql/.
func GraphiQL() http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fileServer := http.FileServerFS(files)
	index, err := fs.ReadFile(files, "graphiql/index.html")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.URL.Path == "/" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write(index)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		h.Set("Cache-Control", "public, max-age=3600")
		fileServer.ServeHTTP(w, r)
	})
}
