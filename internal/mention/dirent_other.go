//go:build !linux

package mention

import "os"

// readNames lists the directory f with its entries' types.
func readNames(root *os.Root, rel string, f *os.File) ([]dirent, error) {
	ents, err := f.ReadDir(-1)
	out := make([]dirent, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), isDir: e.Type().IsDir(), isRegular: e.Type().IsRegular()})
	}
	return out, err
}
