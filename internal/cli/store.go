package cli

import (
	"context"
	"log/slog"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
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

// openServer opens the session database as name and builds the protocol
// server over the app persisting to it (a.NewServer), for a process that
// serves its own client; stop closes the database.
func openServer(ctx context.Context, a *app.App, layout paths.Layout, cfg *config.Config, name string, logger *slog.Logger) (srv *server.Server, stop func(), err error) {
	serve, discard := openServerAside(ctx, layout, name, logger)
	defer discard()
	return serve(a, cfg)
}

// openServerAside is openServer in two halves: it starts opening the
// database (app.OpenStoreAside) and returns at once, so the caller builds
// its app and loads its configuration meanwhile; serve waits for the
// database and builds the server. discard, deferred, closes a database
// serve never took.
func openServerAside(ctx context.Context, layout paths.Layout, name string, logger *slog.Logger) (serve func(a *app.App, cfg *config.Config) (*server.Server, func(), error), discard func()) {
	p := app.OpenStoreAside(ctx, layout, name, logger)
	serve = func(a *app.App, cfg *config.Config) (*server.Server, func(), error) {
		st, err := p.Wait()
		if err != nil {
			return nil, nil, err
		}
		return a.NewServer(cfg, st, name, nil, nil), func() { closeStore(st, logger) }, nil
	}
	return serve, func() { p.Discard(logger) }
}
