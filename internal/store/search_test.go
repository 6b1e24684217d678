package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	add := func(sid, ws, tid, prompt, answer string) {
		t.Helper()
		if _, err := s.Session(ctx, sid); err != nil {
			if _, err := s.CreateSession(ctx, NewSession{ID: sid, Workspace: ws, Origin: OriginExec}); err != nil {
				t.Fatal(err)
			}
		}
		x, _ := s.Session(ctx, sid)
		tl, err := s.BeginTurn(ctx, sid, tid, prompt)
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.Complete(ctx, Completion{Events: []Event{ev(x.LastSeq+1, "turn.completed", "")}, History: HistoryUpdate{Append: []json.RawMessage{msg("user", prompt)}}, Answer: answer}); err != nil {
			t.Fatal(err)
		}
	}
	add("s1", "/a", "t1", "Refactor the parser\nso it streams the tokenizer output", "Done: the tokenizer now streams.")
	add("s1", "/a", "t2", "add tests", "I added tests for the Tokenizer in parser_test.go\nand fixed a bug")
	add("s2", "/b", "t1", "Café menu: translate to English", "Here is the menu in English.")
	add("s3", "/b", "t1", "write a haiku about rain", strings.Repeat("word ", 100)+"with a very long line mentioning tokenizer somewhere in the middle "+strings.Repeat("tail ", 100))

	cases := []struct {
		name, q string
		o       SearchOptions
		want    []Hit
		err     string
	}{
		{"prompt ranks above answer", "tokenizer", SearchOptions{}, []Hit{
			{SessionID: "s1", TurnID: "t1", TurnN: 1, Field: "prompt", Line: "so it streams the tokenizer output"},
			{SessionID: "s1", TurnID: "t2", TurnN: 2, Field: "answer", Line: "I added tests for the Tokenizer in parser_test.go"},
			{SessionID: "s3", TurnID: "t1", TurnN: 1, Field: "answer"},
		}, ""},
		{"all words required", "tokenizer bug", SearchOptions{}, []Hit{
			{SessionID: "s1", TurnID: "t2", TurnN: 2, Field: "answer", Line: "I added tests for the Tokenizer in parser_test.go"},
		}, ""},
		{"last word is a prefix", "refact", SearchOptions{}, []Hit{
			{SessionID: "s1", TurnID: "t1", TurnN: 1, Field: "prompt", Line: "Refactor the parser"},
		}, ""},
		{"diacritics folded", "cafe", SearchOptions{}, []Hit{
			{SessionID: "s2", TurnID: "t1", TurnN: 1, Field: "prompt", Line: "Café menu: translate to English"},
		}, ""},
		{"operators are words", `english OR "NEAR(`, SearchOptions{}, nil, ""},
		{"workspace filter", "english", SearchOptions{Workspace: "/a"}, nil, ""},
		{"limit", "tokenizer", SearchOptions{Limit: 1}, []Hit{
			{SessionID: "s1", TurnID: "t1", TurnN: 1, Field: "prompt", Line: "so it streams the tokenizer output"},
		}, ""},
		{"no words", " -- ", SearchOptions{}, nil, "has no words"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits, err := s.Search(ctx, c.q, c.o)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []Hit
			for _, h := range hits {
				if h.Title == "" || h.Workspace == "" {
					t.Errorf("hit without title or workspace: %+v", h)
				}
				if h.SessionID == "s3" {
					if !strings.Contains(h.Line, "tokenizer") || len(h.Line) > maxLineBytes+10 || !strings.HasPrefix(h.Line, "…") || !strings.HasSuffix(h.Line, "…") {
						t.Errorf("long line cut badly: %q", h.Line)
					}
					h.Line = ""
				}
				got = append(got, Hit{SessionID: h.SessionID, TurnID: h.TurnID, TurnN: h.TurnN, Field: h.Field, Line: h.Line})
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("hits (-want +got):\n%s", d)
			}
		})
	}
	checkFileIntegrity(t, s.Path())
	// Deleted sessions leave the index.
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.Search(ctx, "parser", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("search after delete: %+v, %v", hits, err)
	}
	// A running turn is not found; once it ends (here: interrupted) it is.
	if _, err := s.BeginTurn(ctx, "s2", "t2", "unfinished xylophone"); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.Search(ctx, "xylophone", SearchOptions{}); len(hits) != 0 {
		t.Errorf("running turn found: %+v", hits)
	}
	// The process ends without ending the turn (ReleaseAll stands for
	// its death: the next Recover treats the turn as orphaned).
	if err := s.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Recover(ctx); err != nil || r.Turns != 1 {
		t.Fatalf("recover: %+v, %v", r, err)
	}
	if hits, _ := s.Search(ctx, "xylophone", SearchOptions{}); len(hits) != 1 {
		t.Errorf("interrupted turn not found: %+v", hits)
	}
	if _, err := s.Fork(ctx, "s2", "t2", "s2-fork", OriginTUI); err != nil {
		t.Fatal(err)
	}
	checkFileIntegrity(t, s.Path())
}
