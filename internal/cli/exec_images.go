package cli

import (
	"fmt"
	"os"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/proto"
)

// checkImages reads every -i file before anything runs, so a bad one is a
// usage error naming it (missing, over 8 MiB, not an image by content)
// and no request is made. Paths are relative to the current directory,
// as the shell gave them; the server gets them absolute.
func checkImages(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) > imagefile.MaxPerPrompt {
		return nil, usageErr("-i/--image: %d images, over the limit of %d per prompt; send fewer", len(args), imagefile.MaxPerPrompt)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("current directory: %w", err)
	}
	out := make([]string, 0, len(args))
	var sizes []int64
	for _, a := range args {
		p := imagefile.Resolve(wd, "", a)
		f, err := imagefile.Read(p)
		if err != nil {
			return nil, usageErr("-i/--image %s: %v", a, err)
		}
		out = append(out, p)
		sizes = append(sizes, f.Size)
	}
	if err := imagefile.CheckTotal(sizes...); err != nil {
		return nil, usageErr("-i/--image: %v", err)
	}
	return out, nil
}

// protoImageRefs names images by path for turn.start.
func protoImageRefs(paths []string) []proto.Image {
	if len(paths) == 0 {
		return nil
	}
	out := make([]proto.Image, len(paths))
	for i, p := range paths {
		out[i] = proto.Image{Path: p}
	}
	return out
}
