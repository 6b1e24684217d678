package benchd

import (
	"os"
	"path/filepath"
	"slices"
)

// Tree is a temporary root holding the three directories a process
// benchmark runs scv in: an SCV_HOME, a workspace and a HOME.
type Tree struct{ Root, Home, WS, User string }

// NewTree makes a fresh root (its name starts with prefix) with the three
// directories in it; Remove removes it all.
func NewTree(prefix string) (Tree, error) {
	root, err := os.MkdirTemp("", prefix)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Root: root, Home: filepath.Join(root, "home"), WS: filepath.Join(root, "ws"), User: filepath.Join(root, "user")}
	for _, d := range []string{t.Home, t.WS, t.User} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Remove()
			return Tree{}, err
		}
	}
	return t, nil
}

// Remove removes the tree's root and all under it.
func (t Tree) Remove() { _ = os.RemoveAll(t.Root) }

// Spread sorts v and returns its min, median (the upper one of an even
// count) and max; v must not be empty.
func Spread(v []float64) (lo, mid, hi float64) {
	slices.Sort(v)
	return v[0], v[len(v)/2], v[len(v)-1]
}
