package apptest

import (
	"log/slog"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
)

// StartLogged is StartLive with the server logging to log: for tests of
// what the log says about a request.
func StartLogged(t testing.TB, cfg config.Config, log *slog.Logger) *Server {
	t.Helper()
	return start(t, cfg, app.Options{Logger: log})
}
