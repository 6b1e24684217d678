package mention

import (
	"encoding/binary"
	"os"
	"syscall"
)

// readNames lists the directory f with getdents64 and the type the file
// system gives each entry. os.File.ReadDir on a file opened in an os.Root
// calls lstat for every entry, which made a walk of 100,000 files spend
// most of its time in system calls; the names are resolved through the
// root again when they are used, so the listing needs no more than this.
// An entry of unknown type (DT_UNKNOWN) is asked about with lstat through
// the root.
func readNames(root *os.Root, rel string, f *os.File) ([]dirent, error) {
	var out []dirent
	buf := make([]byte, 32<<10)
	fd := int(f.Fd())
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			nameb := b[19:reclen]
			for i, c := range nameb {
				if c == 0 {
					nameb = nameb[:i]
					break
				}
			}
			b = b[reclen:]
			name := string(nameb)
			if name == "." || name == ".." {
				continue
			}
			d := dirent{name: name}
			switch typ {
			case syscall.DT_DIR:
				d.isDir = true
			case syscall.DT_REG:
				d.isRegular = true
			case syscall.DT_UNKNOWN:
				if fi, err := root.Lstat(join(rel, name)); err == nil {
					d.isDir, d.isRegular = fi.IsDir(), fi.Mode().IsRegular()
				}
			}
			out = append(out, d)
		}
	}
}
