package model_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

// pngBytes is a PNG signature and the start of an IHDR chunk: enough for
// the wire, which never decodes the picture.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")

var imageRequest = model.Request{Messages: []model.Message{
	{Role: model.User, Content: "what is this?", Images: []model.Image{
		{Path: "/ws/shot.png", MediaType: "image/png", Size: int64(len(pngBytes)), SHA256: "x", Data: pngBytes},
		{Path: "/ws/gone.png", MediaType: "image/png"}, // no bytes: left out
	}},
}}

// TestImageRequestShape checks the exact image part of each wire: a data
// URL in a Responses input_image (image_url a string), a chat image_url
// object, an Anthropic base64 image block before the text.
func TestImageRequestShape(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(pngBytes)
	cases := map[string]string{
		model.WireResponses: `[{"type":"message","role":"user","content":[
			{"type":"input_text","text":"what is this?"},
			{"type":"input_image","image_url":"data:image/png;base64,` + b64 + `"}]}]`,
		model.WireChat: `[{"role":"user","content":[
			{"type":"text","text":"what is this?"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]}]`,
		model.WireAnthropic: `[{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}},
			{"type":"text","text":"what is this?","cache_control":{"type":"ephemeral"}}]}]`,
	}
	for wire, want := range cases {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("a cat"))
			c, _ := newClient(t, wire, srv.URL(), nil)
			r, _, err := run(t, c, imageRequest)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != "a cat" {
				t.Errorf("answer %q", r.Content)
			}
			rec := srv.Requests()[0]
			got := rec.Body["messages"]
			if wire == model.WireResponses {
				got = rec.Body["input"]
			}
			if d := cmp.Diff(decode(t, want), got); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			imgs := rec.Images()
			if len(imgs) != 1 || imgs[0].MediaType != "image/png" || !bytes.Equal(imgs[0].Data, pngBytes) {
				t.Errorf("Images() = %+v, want the one PNG", imgs)
			}
			if bytes.Contains(rec.Raw, []byte("/ws/shot.png")) {
				t.Error("the request names the image's path; only its bytes are for the model")
			}
		})
	}
}

// TestTextOnlyPromptStaysAString: a prompt without images keeps the plain
// string content the wires had before.
func TestTextOnlyPromptStaysAString(t *testing.T) {
	for _, wire := range []string{model.WireResponses, model.WireChat} {
		srv := modeltest.New(t)
		srv.Script(modeltest.Text("ok"))
		c, _ := newClient(t, wire, srv.URL(), nil)
		req := model.Request{Messages: []model.Message{{Role: model.User, Content: "hi", Images: []model.Image{{Path: "/gone.png"}}}}}
		if _, _, err := run(t, c, req); err != nil {
			t.Fatal(err)
		}
		rec := srv.Requests()[0]
		items := rec.Messages()
		if wire == model.WireResponses {
			items = rec.InputItems()
		}
		if s, ok := items[0]["content"].(string); !ok || s != "hi" {
			t.Errorf("%s: content %#v, want the string", wire, items[0]["content"])
		}
	}
}

// TestImageRefusedSaysSo: a 400 about images says the model may not take
// them, or, about an image's size, that the image is too large; a 400
// about something else, or without images, says neither.
func TestImageRefusedSaysSo(t *testing.T) {
	cases := []struct {
		name string
		body string
		req  model.Request
		hint string // "" for none
	}{
		{"about images", `{"error":{"message":"image input is not supported for this model"}}`, imageRequest, "this model may not accept images;"},
		{"vision", `{"error":{"message":"model does not support vision"}}`, imageRequest, "this model may not accept images;"},
		{"image too large", `{"error":{"message":"messages.0.content.0.image.source.base64: image exceeds 5 MB maximum"}}`, imageRequest, "the provider refused an image as too large"},
		{"other 400", `{"error":{"message":"max_tokens is too large"}}`, imageRequest, ""},
		{"no images", `{"error":{"message":"image input is not supported"}}`, hello, ""},
	}
	for _, wire := range []string{model.WireResponses, model.WireChat, model.WireAnthropic} {
		for _, c := range cases {
			t.Run(wire+"/"+c.name, func(t *testing.T) {
				srv := modeltest.New(t)
				srv.Script(modeltest.HTTPError(400, c.body, ""))
				cl, _ := newClient(t, wire, srv.URL(), nil)
				_, _, err := run(t, cl, c.req)
				if err == nil {
					t.Fatal("no error")
				}
				for _, h := range []string{"this model may not accept images;", "the provider refused an image as too large"} {
					if got := strings.Contains(err.Error(), h); got != (h == c.hint) {
						t.Errorf("says %q: %v, want %v: %v", h, got, h == c.hint, err)
					}
				}
				if !strings.Contains(err.Error(), "HTTP 400") {
					t.Errorf("the status is gone: %v", err)
				}
			})
		}
	}
}
