package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
)

// databaseExists says the session database file is there (status reads it
// only then, rather than creating an empty one).
func databaseExists(layout paths.Layout) bool {
	_, err := os.Stat(layout.Database())
	return !errors.Is(err, fs.ErrNotExist)
}

// offlineDatabase reads the database's state while no daemon runs; nil
// when there is no database yet or it cannot be read.
func (g *globals) offlineDatabase(layout paths.Layout) *proto.Database {
	if !databaseExists(layout) {
		return nil
	}
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(g.ctx, layout, "", logger)
	if err != nil {
		return nil
	}
	defer st.Close()
	return app.DatabaseStatus(g.ctx, st, logger)
}

// describeDatabase is the status line of the database.
func describeDatabase(d *proto.Database) string {
	return fmt.Sprintf("%s (%s, %s, %s)", d.Path, byteSize(d.FileBytes), count(d.Sessions, "session"), count(d.Turns, "turn"))
}

// count is "1 turn", "2 turns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byteSize formats a size in B, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
