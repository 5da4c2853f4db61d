// Package webui serves the pages wagraph offers people, from files embedded
// in the binary: nothing is fetched from elsewhere, so they work on a
// machine without internet. Three pages: the dashboard under /ui/ (plain
// HTML, CSS and JavaScript modules written here, static/ui), GraphiQL at /
// (static/graphiql) and the REST API reference at /api/docs
// (static/apidocs).
//
// GraphiQL is a pinned dependency whose built files are committed under
// static/graphiql, with their licenses: graphiql 3.8.3 (graphiql.min.js,
// graphiql.min.css), react 18.3.1 and react-dom 18.3.1 (their UMD
// production builds), taken from `npm pack graphiql@3.8.3 react@18.3.1
// react-dom@18.3.1`. Their SHA-256 sums are in webui_test.go: a change of
// version changes them there too. index.html, page.css, init.js and
// fetcher.js (subscriptions over graphql-transport-ws, which GraphiQL's
// bundle cannot open by itself) are wagraph's.
//
// The API reference is Swagger UI, pinned the same way under
// static/apidocs: swagger-ui-bundle.js and swagger-ui.css of `npm pack
// swagger-ui-dist@5.35.0`, with its LICENSE, NOTICE and the licenses of
// what its bundle holds; their sums are in apidocs_test.go. It renders the
// OpenAPI document the server serves (/api/v1/openapi.json); index.html,
// page.css and init.js are wagraph's.
//
// The pages talk to the public API only (/graphql over HTTP and
// graphql-transport-ws; /api/v1 for the reference's "Try it out"), with a
// token the person gives them: they hold no privilege of their own, so
// serving them needs no token.
//
// Every answer carries a Content-Security-Policy that lets the page run
// only scripts of this origin (no inline script), talk only to this origin,
// and never be framed. A message text or push name that slipped into the
// page as markup could then still not run.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is GraphiQL's policy. GraphiQL sets styles from
// its scripts (style-src 'unsafe-inline'); its stylesheet carries its fonts
// and icons as data: URLs.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// DashboardPolicy is the dashboard's policy, stricter than GraphiQL's: no
// style but its stylesheet either. img-src allows data: for the QR code
// (Session.qrImage) and a picked image's preview. connect-src 'self' covers
// the page's own ws:// and wss:// origin (CSP Level 3).
const DashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// GraphiQL serves GraphiQL's page at / and its files under /graphiql/.
func GraphiQL() http.Handler {
	return pages("graphiql", "/", ContentSecurityPolicy, "public, max-age=3600")
}

// APIDocs serves the REST API reference: its page at /api/docs and its
// files under /apidocs/, under GraphiQL's policy (Swagger UI, too, sets
// styles from its scripts).
func APIDocs() http.Handler {
	return pages("apidocs", "/api/docs", ContentSecurityPolicy, "public, max-age=3600")
}

// Dashboard serves the dashboard: its page at /ui/ and its files beside it.
// Its routes live in the URL's fragment (#/sessions/…), so every page of
// it is the one index.html.
func Dashboard() http.Handler {
	// Its files change with each release and are small: the browser asks
	// again rather than mix versions.
	return pages("ui", "/ui/", DashboardPolicy, "no-cache")
}

// pages serves the embedded directory dir under its own name: its
// index.html at index, every other file as is with cache as its
// Cache-Control, no directory listing.
func pages(dir, index, policy, cache string) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fileServer := http.FileServerFS(files)
	page, err := fs.ReadFile(files, dir+"/index.html")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Frame-Options", "DENY") // for browsers before frame-ancestors
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.URL.Path == index {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write(page)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		h.Set("Cache-Control", cache)
		fileServer.ServeHTTP(w, r)
	})
}
