package model

import (
	"encoding/json"
	"testing"
)

// BenchmarkImageRequestBody encodes a request carrying the most image
// bytes the agent resends (20 MiB in 4 images) on each wire: the cost every
// model request of a session with screenshots pays before it is sent.
func BenchmarkImageRequestBody(b *testing.B) {
	c, err := newCore(Options{BaseURL: "http://127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	var ims []Image
	for range 4 {
		ims = append(ims, Image{Path: "/s.png", MediaType: "image/png", Size: 5 << 20, Data: make([]byte, 5<<20)})
	}
	req := Request{Model: "m", Messages: []Message{{Role: User, Content: "what changed?", Images: ims}}}
	for _, w := range []struct {
		name string
		body func(*imageSlots) jsonObject
	}{
		{"responses", func(s *imageSlots) jsonObject { return c.responsesBody(req, s) }},
		{"chat", func(s *imageSlots) jsonObject { return c.chatBody(req, s) }},
		{"anthropic", func(s *imageSlots) jsonObject { return c.anthropicBody(req, 0, s) }},
	} {
		b.Run(w.name, func(b *testing.B) {
			b.SetBytes(20 << 20)
			b.ReportAllocs()
			for b.Loop() {
				slots := newImageSlots()
				body, err := json.Marshal(w.body(slots))
				if err == nil {
					_, err = slots.splice(body)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
