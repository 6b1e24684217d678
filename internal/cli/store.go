package cli

import (
	"context"
	"log/slog"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
)

// The session database is opened, closed and served only by internal/app;
// this file names its type for the commands that hold the handle app
// gives them (and pass it to the server app builds), so no other command
// file names the store.

// openStore opens the instance's session database (app.OpenStore).
func openStore(ctx context.Context, layout paths.Layout, name string, logger *slog.Logger) (*store.Store, error) {
	return app.OpenStore(ctx, layout, name, logger)
}

// closeStore gives back this process's leases and closes the database.
func closeStore(st *store.Store, logger *slog.Logger) { app.CloseStore(st, logger) }

// newServer is a.NewServer: the protocol server over the app persisting
// to st. logger is the app's own (every caller built a with it).
func newServer(a *app.App, _ *slog.Logger, cfg *config.Config, st *store.Store, name string, status func() proto.DaemonStatus, shutdown func()) *server.Server {
	return a.NewServer(cfg, st, name, status, shutdown)
}
