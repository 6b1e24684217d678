package model

import (
	"encoding/json"
	"testing"
)

// TestSpliceImages: placeholders are replaced wherever the marshalled
// map put them (keys are sorted, not in slot order), text that merely
// looks like a placeholder stays, and a lost placeholder is an error.
func TestSpliceImages(t *testing.T) {
	s := newImageSlots()
	a := s.dataURL(Image{MediaType: "image/png", Data: []byte("AAA")})
	b := s.base64(Image{Data: []byte("BB")})
	body, err := json.Marshal(map[string]any{"z": a, "a": b, "t": "scv-image-0000-0- is plain text"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.splice(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":"QkI=","t":"scv-image-0000-0- is plain text","z":"data:image/png;base64,QUFB"}`
	if string(out) != want {
		t.Errorf("spliced %s, want %s", out, want)
	}
	s.dataURL(Image{MediaType: "image/gif", Data: []byte("C")})
	if _, err := s.splice(body); err == nil {
		t.Error("a body missing a placeholder was accepted")
	}
}
