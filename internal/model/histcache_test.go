package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomMessage is one history message with text that needs escaping
// (quotes, HTML, U+2028, invalid UTF-8), empty contents and tool calls.
func randomMessage(r *rand.Rand, i int) Message {
	texts := []string{"", "plain", `say "hi" <b>&</b>`, "line\nbreak\ttab \u2028 \xff end", "ünïcødé 🚀"}
	t := texts[r.IntN(len(texts))] + fmt.Sprint(r.IntN(3))
	switch r.IntN(4) {
	case 0:
		return Message{Role: User, Content: t}
	case 1:
		var calls []ToolCall
		for k := r.IntN(3); k > 0; k-- {
			calls = append(calls, ToolCall{ID: fmt.Sprintf("c%d_%d", i, k), Name: "bash", Arguments: []string{"", `{"command":"ls <x>"}`}[r.IntN(2)]})
		}
		if r.IntN(2) == 0 {
			t = ""
		}
		var th []Thinking
		if r.IntN(2) == 0 {
			th = []Thinking{{Text: "think " + t, Signature: fmt.Sprint("s", i)}, {Redacted: "r<>"}}
		}
		return Message{Role: Assistant, Content: t, ToolCalls: calls, Thinking: th}
	case 2:
		return Message{Role: ToolRole, ToolCallID: fmt.Sprintf("c%d", i), Name: "bash", Content: t}
	}
	return Message{Role: Assistant, Content: t}
}

// TestHistoryCacheBytesIdentical encodes a session's requests with and
// without a HistoryCache on both wires that use it and compares the
// bodies: growth, a compaction (a note replacing a prefix), a rewind (a
// shorter history), an edited message at the same position, messages with
// images and a change of wire must all give the uncached bytes.
func TestHistoryCacheBytesIdentical(t *testing.T) {
	tools := []ToolSpec{{Name: "bash", Description: "run <cmd>", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, wire := range []string{WireResponses, WireChat, WireAnthropic} {
		t.Run(wire, func(t *testing.T) {
			c, err := newCore(Options{BaseURL: "http://127.0.0.1:1", WireAPI: wire})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, uint64(len(wire))))
			cache := NewHistoryCache()
			var hist []Message
			cached := 0
			for step := 0; step < 400; step++ {
				sent := &hist
				var withImage []Message
				switch op := r.IntN(20); {
				case op == 0 && len(hist) > 4: // compaction: a note replaces a prefix
					cut := r.IntN(len(hist) - 2)
					hist = append([]Message{{Role: User, Content: fmt.Sprintf("note %d", step)}}, hist[cut:]...)
				case op == 1 && len(hist) > 2: // rewind
					hist = hist[:r.IntN(len(hist))]
				case op == 2 && len(hist) > 0: // same position, new content
					i := r.IntN(len(hist))
					hist = append(hist[:i:i], append([]Message{randomMessage(r, step)}, hist[i+1:]...)...)
				case op == 4 && len(hist) > 1: // a selection sent without its note
					hist = hist[1:]
				case op == 3: // this request only: a message with an image
					withImage = append(hist[:len(hist):len(hist)], Message{Role: User, Content: "see", Images: []Image{{MediaType: "image/png", Data: []byte{1, 2, 3}}}})
					sent = &withImage
				default:
					for k := 1 + r.IntN(3); k > 0; k-- {
						hist = append(hist, randomMessage(r, step*10+k))
					}
				}
				req := Request{Model: "m", Instructions: []string{"", "be <brief>"}[r.IntN(2)], Tools: tools, Messages: *sent, ReasoningEffort: []string{"", "low"}[r.IntN(2)]}
				want, err := encodeRequest(c, wire, req)
				if err != nil {
					t.Fatal(err)
				}
				req.Cache = cache
				got, err := encodeRequest(c, wire, req)
				if err != nil {
					t.Fatal(err)
				}
				if hasImages(*sent) {
					// Image placeholders carry a random nonce only while
					// marshalling; the spliced bodies must still agree.
					if !json.Valid(got) || len(got) != len(want) {
						t.Fatalf("step %d: with images, cached body differs in length: %d vs %d", step, len(got), len(want))
					}
					continue
				}
				cached++
				if !bytes.Equal(got, want) {
					t.Fatalf("step %d: cached body differs:\n got %s\nwant %s", step, got, want)
				}
				if !json.Valid(got) {
					t.Fatalf("step %d: invalid JSON %s", step, got)
				}
			}
			if cached < 300 {
				t.Fatalf("only %d of 400 steps compared byte for byte", cached)
			}
		})
	}
}

func hasImages(msgs []Message) bool {
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}

// TestHistoryCacheWireChange checks one cache used on another wire does
// not hand back the first wire's encodings.
func TestHistoryCacheWireChange(t *testing.T) {
	cache := NewHistoryCache()
	hist := []Message{{Role: User, Content: "hi"}, {Role: ToolRole, ToolCallID: "c1", Content: "out"}}
	for _, wire := range []string{WireResponses, WireChat, WireAnthropic, WireResponses} {
		c, err := newCore(Options{BaseURL: "http://127.0.0.1:1", WireAPI: wire})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := encodeRequest(c, wire, Request{Model: "m", Messages: hist})
		got, err := encodeRequest(c, wire, Request{Model: "m", Messages: hist, Cache: cache})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: got %s (%v), want %s", wire, got, err, want)
		}
	}
}

// TestHistoryCacheBodyStable checks a body handed out keeps its bytes while
// later requests append to the cache's buffer, rewind it and rebuild it (a
// body may still be being sent when the next request is encoded).
func TestHistoryCacheBodyStable(t *testing.T) {
	c, err := newCore(Options{BaseURL: "http://127.0.0.1:1", WireAPI: WireResponses})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	cache := NewHistoryCache()
	var hist []Message
	type held struct {
		body reqBody
		want []byte
	}
	var bodies []held
	for step := 0; step < 200; step++ {
		switch op := r.IntN(6); {
		case op == 0 && len(hist) > 2:
			hist = hist[:r.IntN(len(hist))]
		case op == 1 && len(hist) > 2:
			hist = append([]Message{{Role: User, Content: fmt.Sprint("note ", step)}}, hist[2:]...)
		default:
			hist = append(hist, randomMessage(r, step))
		}
		b, err := c.encodeResponses(Request{Model: "m", Messages: hist, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, held{b, bytes.Clone(b.bytes())})
		for i, h := range bodies {
			if !bytes.Equal(h.body.bytes(), h.want) {
				t.Fatalf("step %d: the body of step %d changed", step, i)
			}
		}
	}
}
