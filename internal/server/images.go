package server

import (
	"fmt"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// Input images (docs/protocol.md, object image): turn.start names each
// image by path; the server reads and checks every file before the turn
// is queued, so a bad file refuses the turn.start instead of failing the
// turn, and the bytes read then are the ones the model gets (a later
// change of the file does not reach this turn).

// readImages reads the images of a turn.start; paths are absolute or
// relative to the session's workspace.
func (s *session) readImages(refs []proto.Image) ([]model.Image, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if len(refs) > imagefile.MaxPerPrompt {
		return nil, fmt.Errorf("the prompt carries %d images, over the limit of %d; send fewer", len(refs), imagefile.MaxPerPrompt)
	}
	out := make([]model.Image, 0, len(refs))
	var sizes []int64
	for _, r := range refs {
		if r.Path == "" {
			return nil, fmt.Errorf("an image has no path; name the file in path")
		}
		f, err := imagefile.Read(imagefile.Resolve(s.info.Cwd, "", r.Path))
		if err != nil {
			return nil, err
		}
		out = append(out, model.Image{Path: f.Path, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, Data: f.Data})
		if sizes = append(sizes, f.Size); imagefile.CheckTotal(sizes...) != nil {
			return nil, imagefile.CheckTotal(sizes...)
		}
	}
	return out, nil
}

// storeImages is what the store records of a turn's images.
func storeImages(ims []model.Image) []store.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]store.Image, len(ims))
	for i, im := range ims {
		out[i] = store.Image{Path: im.Path, MediaType: im.MediaType, Size: im.Size, SHA256: im.SHA256}
	}
	return out
}

// protoImages is the protocol form of a stored turn's images.
func protoImages(ims []store.Image) []proto.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]proto.Image, len(ims))
	for i, im := range ims {
		out[i] = proto.Image{Path: im.Path, MediaType: im.MediaType, Size: im.Size, SHA256: im.SHA256}
	}
	return out
}
