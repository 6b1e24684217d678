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
	p := openServerAside(ctx, layout, name, false, logger)
	defer p.discard()
	return p.serveOpen(ctx, a, cfg)
}

// serverAside is openServer in parts: the database starts opening in the
// background (app.OpenStoreAside) while the caller builds its app and
// loads its configuration; serve builds the server at once over the
// database still opening (its methods wait for it), and ready waits for
// the opening and says how it ended. Its methods are for the goroutine
// that made it.
type serverAside struct {
	st     *store.Store
	err    error
	name   string
	logger *slog.Logger
	taken  bool
	cancel context.CancelFunc // of the opening, for discard
}

// openServerAside starts opening the database as name; warm prepares it
// for a turn about to run (app.OpenStoreAside).
func openServerAside(ctx context.Context, layout paths.Layout, name string, warm bool, logger *slog.Logger) *serverAside {
	ctx, cancel := context.WithCancel(ctx)
	st, err := app.OpenStoreAside(ctx, layout, name, warm, logger)
	return &serverAside{st: st, err: err, name: name, logger: logger, cancel: cancel}
}

// serve builds the protocol server over the app persisting to the database
// (a.NewServer); stop closes the database.
func (p *serverAside) serve(a *app.App, cfg *config.Config) (*server.Server, func(), error) {
	if p.err != nil {
		return nil, nil, p.err
	}
	p.taken = true
	return a.NewServer(cfg, p.st, p.name, nil, nil), func() { closeStore(p.st, p.logger) }, nil
}

// serveOpen is serve once the database is open: what openServer returns.
func (p *serverAside) serveOpen(ctx context.Context, a *app.App, cfg *config.Config) (*server.Server, func(), error) {
	srv, stop, err := p.serve(a, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := p.ready(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return srv, stop, nil
}

// ready waits for the database to be open (app.StoreReady).
func (p *serverAside) ready(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	return app.StoreReady(ctx, p.st)
}

// discard, deferred, closes the database unless serve handed it out: the
// process failed before it served anything (its configuration, say), so the
// opening is cancelled rather than waited for, and no lease needs giving
// back.
func (p *serverAside) discard() {
	if p.err == nil && !p.taken {
		p.cancel()
		p.st.Close()
	}
	p.cancel()
}
