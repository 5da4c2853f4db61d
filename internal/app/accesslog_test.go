package app_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/logtest"
)

// TestAccessLogLevel checks that the access record is written at debug
// level with the request's status, and not at all at info level (where the
// middleware passes the request straight through).
func TestAccessLogLevel(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			log, buf := logtest.New(tc.level)
			srv := apptest.StartLogged(t, apptest.Config(t), log)
			if res := srv.REST(t, "GET", "/session/nope/webhook", apptest.AdminToken, ""); res.Status != http.StatusNotFound {
				t.Fatalf("list: %d %s", res.Status, res.Body)
			}
			var found bool
			for _, rec := range buf.Records() {
				if rec["msg"] == "http" && rec["path"] == "/api/v1/session/nope/webhook" {
					found = true
					if rec["status"] != float64(http.StatusNotFound) || rec["method"] != "GET" || rec["request_id"] == "" {
						t.Errorf("access record %v, want GET, status 404 and a request id", rec)
					}
				}
			}
			if found != tc.want {
				t.Errorf("access record written: %v, want %v", found, tc.want)
			}
		})
	}
}
