package proto

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchEvents are typical server events: a tool.completed carrying 1 KiB of
// tool output (a JSON document as a string, so it needs escaping) and a
// short assistant.delta.
func benchEvents() map[string]Event {
	out := `{"exit_code":0,"timed_out":false,"output":"` + strings.Repeat(`ok  \tpkg/x\t0.01s\n`, 45) + `","truncated":false}`
	out += strings.Repeat(" ", 1024-len(out)) // exactly 1 KiB
	head := func(seq uint64) TurnHeader {
		return TurnHeader{SessionHeader: SessionHeader{SessionID: "3f6c2a9e-5b1d-4c8e-9a7f-0d2b4e6f8a1c", Seq: seq}, TurnID: "turn_42"}
	}
	return map[string]Event{
		"tool.completed-1KiB": &ToolCompleted{TurnHeader: head(1234), CallID: "call_abcdef0123456789", Name: "bash", Success: true, Output: out},
		"assistant.delta":     &AssistantDelta{TurnHeader: head(1235), Content: "Now let me run the tests to check "},
	}
}

// BenchmarkEventEncode is EncodeEvent of one event, as the server writes it.
func BenchmarkEventEncode(b *testing.B) {
	for name, ev := range benchEvents() {
		b.Run(name, func(b *testing.B) {
			line, err := EncodeEvent(ev)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventDecode is DecodeEvent of one event line (its type first,
// then the struct of that type), as a client reads it; the round trip must
// give the event back.
func BenchmarkEventDecode(b *testing.B) {
	for name, ev := range benchEvents() {
		b.Run(name, func(b *testing.B) {
			line, err := EncodeEvent(ev)
			if err != nil {
				b.Fatal(err)
			}
			got, err := DecodeEvent(line)
			if err != nil {
				b.Fatal(err)
			}
			if again, _ := EncodeEvent(got); string(again) != string(line) {
				b.Fatalf("round trip changed the event:\n%s\n%s", line, again)
			}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeEvent(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTurnStartDecode decodes a client turn.start with a 1 KiB prompt:
// the envelope first, then the full message, as the server does.
func BenchmarkTurnStartDecode(b *testing.B) {
	line, err := EncodeMessage(&TurnStart{Envelope: Envelope{RequestID: "r7"}, SessionID: "3f6c2a9e-5b1d-4c8e-9a7f-0d2b4e6f8a1c", Prompt: strings.Repeat("fix the failing test, ", 1024/22)})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var env Envelope
		if err := json.Unmarshal(line, &env); err != nil || env.Type != TypeTurnStart {
			b.Fatal(env.Type, err)
		}
		var ts TurnStart
		if err := json.Unmarshal(line, &ts); err != nil {
			b.Fatal(err)
		}
	}
}
