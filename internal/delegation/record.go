package delegation

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Record is one delegated run, as stored in run/delegations/<handle>.json.
type Record struct {
	Handle  string `json:"handle"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	// Job is the background job the run is (job-<n> of Session), "" for
	// a call the turn waits for.
	Job   string `json:"job,omitempty"`
	Cwd   string `json:"cwd"`
	Depth int    `json:"depth"`
	// PID and PIDStart identify the agent process (its group leader).
	PID      int    `json:"pid"`
	PIDStart uint64 `json:"pid_start"`
	// OwnerPID and OwnerStart identify the SCV process that owns the run.
	OwnerPID   int       `json:"owner_pid"`
	OwnerStart uint64    `json:"owner_start"`
	StartedAt  time.Time `json:"started_at"`
	// Killed is set by `scv agents kill` before it signals, so the owner
	// reports the run as cancelled rather than failed.
	Killed bool `json:"killed,omitempty"`
}

// ValidHandle says h has the handle form <agent>-<6 hex>: a lower-case
// letter, then [a-z0-9_]*, '-' and six lower-case hex digits.
func ValidHandle(h string) bool {
	n := len(h) - 7
	if n < 1 || h[n] != '-' || h[0] < 'a' || h[0] > 'z' {
		return false
	}
	for i := 1; i < n; i++ {
		if c := h[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	for i := n + 1; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewHandle returns <agent>-<6 random hex digits>; Tracker.NewHandle also
// checks that no record uses it.
func NewHandle(agent string) (string, error) { return newHandle(agent) }

func newHandle(agent string) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new handle: %w", err)
	}
	return agent + "-" + hex.EncodeToString(b[:]), nil
}

func (t *Tracker) path(handle string) string { return filepath.Join(t.dir, handle+".json") }

// ensureDir creates the record directory and its parent with mode 0700.
func ensureDir(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("chmod %s: %w", d, err)
		}
	}
	return nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory (mode perm, fsynced) and a rename, so readers see the old or the
// new content, never a part.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm, true)
}

// writeFileAtomic is WriteFileAtomic, with the fsync only when durable.
func writeFileAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return nil
}

func (t *Tracker) write(r Record) error { return writeRecord(t.path(r.Handle), r) }

// writeRecord stores v as indented JSON at path (mode 0600, atomically),
// creating its directory (and the one above) with mode 0700. It is not
// fsynced: a record is for when the SCV process dies, whose written pages
// the kernel keeps; a crash of the machine takes the recorded processes
// with it. (Two fsyncs per bash call were most of the record's cost.)
func writeRecord(path string, v any) error {
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600, false)
}

// Read loads the record of handle.
func (t *Tracker) Read(handle string) (Record, error) {
	if !ValidHandle(handle) {
		return Record{}, fmt.Errorf("%q is not a delegation handle (like codex-3f9a2c)", handle)
	}
	b, err := os.ReadFile(t.path(handle))
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, fmt.Errorf("no delegation %s: see `scv agents ps --all`: %w", handle, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("read delegation %s: %w", handle, err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("read delegation %s: %w", handle, err)
	}
	return r, nil
}

// ErrNotFound says there is no record for a handle.
var ErrNotFound = errors.New("delegation not found")

// readAll loads every record, sorted by start time; unreadable files are
// skipped (their names are returned for reporting).
func (t *Tracker) readAll() ([]Record, []string, error) {
	names, err := recordNames(t.dir, ValidHandle)
	if err != nil {
		return nil, nil, fmt.Errorf("list delegations: %w", err)
	}
	var recs []Record
	var bad []string
	for _, h := range names {
		r, err := t.Read(h)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				bad = append(bad, h+".json")
			}
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].StartedAt.Before(recs[j].StartedAt) })
	return recs, bad, nil
}

// recordNames lists the <name>.json files of dir whose name is valid; a
// missing directory holds none.
func recordNames(dir string, valid func(string) bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && valid(n) {
			names = append(names, n)
		}
	}
	return names, nil
}

func (t *Tracker) remove(handle string) {
	_ = os.Remove(t.path(handle))
}
