// Package imagefile reads the image files a prompt carries: it checks a
// file's type by its content (PNG, JPEG, GIF or WebP; never by its name),
// bounds its size, and hashes it, so a session can keep an image by path
// and hash and check on resume that the file is still the one attached.
// Every client (scv exec -i, the TUI's /image and @ mentions) and the
// server go through Read, so they refuse the same files with the same
// words.
package imagefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// MaxBytes is the largest image file a prompt may carry (8 MiB).
const MaxBytes = 8 << 20

// MaxPerPrompt is the most images one prompt may carry.
const MaxPerPrompt = 16

// MaxTotalBytes bounds the images of one prompt together, and the images
// one model request resends from the history (20 MiB: about 27 MB as
// base64, below the smallest request limit of the providers).
const MaxTotalBytes = 20 << 20

// CheckTotal refuses a prompt whose images, of sizes sizes, add up to more
// than MaxTotalBytes.
func CheckTotal(sizes ...int64) error {
	var n int64
	for _, s := range sizes {
		n += s
	}
	if n > MaxTotalBytes {
		return fmt.Errorf("the prompt's images are %s together, over the limit of 20 MiB per prompt; send fewer or smaller ones", Size(n))
	}
	return nil
}

// Accepted media types, as the providers name them.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// File is one image file as read: Data are its bytes, SHA256 their hex
// digest, MediaType what its content is.
type File struct {
	Path      string
	MediaType string
	Size      int64
	SHA256    string
	Data      []byte
}

// Sniff returns the media type of data when it is one of the accepted
// image types, judged by its first bytes alone; ok is false otherwise and
// mediaType then says what the content looks like (for the error).
func Sniff(data []byte) (mediaType string, ok bool) {
	t := http.DetectContentType(data)
	switch t {
	case PNG, JPEG, GIF, WebP:
		return t, true
	}
	return t, false
}

// Read reads the image file at path (absolute, or relative to the
// current directory of the caller: resolve it first with Resolve). The
// error names the file and says what was wrong: missing, not a regular
// file, over MaxBytes, or not an accepted image type.
func Read(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, openError(path, err)
	}
	defer f.Close()
	return ReadOpened(path, f)
}

// ReadOpened is Read for a file the caller opened itself (through an
// os.Root, say); path is the name errors give it and the File's Path.
func ReadOpened(path string, f *os.File) (File, error) {
	st, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("image %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("image %s is not a regular file; attach a PNG, JPEG, GIF or WebP file", path)
	}
	if st.Size() > MaxBytes {
		return File{}, sizeError(path, st.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("image %s: read: %w", path, err)
	}
	if len(data) > MaxBytes {
		return File{}, sizeError(path, int64(len(data)))
	}
	return Check(path, data)
}

// Check validates data as the image file path (its type by content) and
// returns it as a File.
func Check(path string, data []byte) (File, error) {
	if len(data) > MaxBytes {
		return File{}, sizeError(path, int64(len(data)))
	}
	if len(data) == 0 {
		return File{}, fmt.Errorf("image %s is empty; attach a PNG, JPEG, GIF or WebP file", path)
	}
	mt, ok := Sniff(data)
	if !ok {
		return File{}, fmt.Errorf("image %s is %s by its content, not PNG, JPEG, GIF or WebP (the name does not count); convert it to one of those", path, mt)
	}
	sum := sha256.Sum256(data)
	return File{Path: path, MediaType: mt, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Data: data}, nil
}

func sizeError(path string, n int64) error {
	return fmt.Errorf("image %s is %d bytes (%s), over the limit of 8 MiB (%d bytes); shrink or crop it", path, n, Size(n), MaxBytes)
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("image %s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("image %s: permission denied", path)
	}
	return fmt.Errorf("image %s: %w", path, err)
}

// Resolve makes path absolute against dir (a relative path names a file
// in dir); a leading "~/" is the home directory home when home is set.
func Resolve(dir, home, path string) string {
	if home != "" && (path == "~" || strings.HasPrefix(path, "~/")) {
		path = filepath.Join(home, strings.TrimPrefix(path, "~"))
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(path)
}

// HasImageName reports whether name ends like an image file (.png, .jpg,
// .jpeg, .gif, .webp): a hint for a client deciding whether a pasted
// path is meant as an image. Read still judges the content.
func HasImageName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// Size formats n bytes the way chips and errors show them: B, KB, MB
// (powers of 1024, one decimal below 10).
func Size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return unit(float64(n)/1024, "KB")
	}
	return unit(float64(n)/(1024*1024), "MB")
}

func unit(v float64, u string) string {
	if v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f %s", v, u)
	}
	return fmt.Sprintf("%.0f %s", v, u)
}

// Chip is how a transcript shows an attached image: [image shot.png 120 KB].
func Chip(path string, size int64) string {
	return fmt.Sprintf("[image %s %s]", filepath.Base(path), Size(size))
}
