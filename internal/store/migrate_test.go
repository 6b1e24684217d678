package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// copyFixture copies testdata/<name> into a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "scv.db")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMigrations opens the fixture of every released schema version with
// the current code.
func TestMigrations(t *testing.T) {
	for v := 1; v <= SchemaVersion(); v++ {
		name := fmt.Sprintf("v%d.db", v)
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join("testdata", name)); err != nil {
				if v == SchemaVersion() {
					t.Skipf("no fixture of the current version yet (write it with -update when releasing it)")
				}
				t.Fatalf("no fixture for schema version %d: write it with -update at the commit that released it (%v)", v, err)
			}
			s := openAt(t, copyFixture(t, name), func(o *Options) { o.Alive = fixtureAlive })
			st, err := s.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Schema != SchemaVersion() {
				t.Fatalf("schema %d after open, want %d", st.Schema, SchemaVersion())
			}
			checkFixture(t, s, v)
		})
	}
}

// TestConcurrentMigration opens the oldest fixture from several stores at
// once: one migrates, the others wait and find it done.
func TestConcurrentMigration(t *testing.T) {
	p := copyFixture(t, "v1.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(context.Background(), Options{Path: p, Holder: self})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	s := openAt(t, p, func(o *Options) { o.Alive = fixtureAlive })
	checkFixture(t, s, 1)
}

func TestNewerSchemaRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, p, nil)
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), Options{Path: p})
	if err == nil || !strings.Contains(err.Error(), "newer than this scv understands") {
		t.Fatalf("open of a newer schema: %v", err)
	}
}

func TestNotADatabase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scv.db")
	if err := os.WriteFile(p, []byte(strings.Repeat("not a database\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{Path: p})
	if err == nil || !strings.Contains(err.Error(), "not an SCV database") || !strings.Contains(err.Error(), p) {
		t.Fatalf("open of a text file: %v", err)
	}
}
