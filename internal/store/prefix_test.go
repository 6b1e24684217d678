package store

import (
	"context"
	"errors"
	"testing"
)

// TestResolveID: a session is named by its id or by a unique prefix of it
// (with or without "s_"); an ambiguous prefix lists the candidates, a too
// short one says how long it must be, an unknown one is not found.
func TestResolveID(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"s_1a2b3c4d-5e6", "s_1a2b9999-000", "s_77aa0000-111", "s_77a", "fx-b"} {
		if _, err := s.CreateSession(ctx, NewSession{ID: id, Workspace: "/ws", Origin: OriginExec}); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		"s_1a2b3c4d-5e6": "s_1a2b3c4d-5e6", // whole id
		"s_1a2b3":        "s_1a2b3c4d-5e6",
		"1a2b9":          "s_1a2b9999-000", // without s_
		"s_77aa":         "s_77aa0000-111",
		"s_77a":          "s_77a", // an exact id shorter than the minimum
		"fx-b":           "fx-b",  // an exact id without s_ (a fixture's, an older version's)
	} {
		got, err := s.ResolveID(ctx, in)
		if err != nil || got != want {
			t.Errorf("ResolveID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := s.ResolveID(ctx, "s_1a2b")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.IDs) != 2 || amb.IDs[0] != "s_1a2b3c4d-5e6" || amb.IDs[1] != "s_1a2b9999-000" {
		t.Errorf("ambiguous prefix: %v", err)
	} else if want := `session id prefix "s_1a2b" matches s_1a2b3c4d-5e6, s_1a2b9999-000: give more of the id`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	var short *ShortPrefixError
	if _, err := s.ResolveID(ctx, "s_1a"); !errors.As(err, &short) {
		t.Errorf("short prefix: %v", err)
	}
	for _, in := range []string{"s_ffff", "s_1a2b%", "s_1a2_"} {
		if _, err := s.ResolveID(ctx, in); !errors.Is(err, ErrNotFound) {
			t.Errorf("ResolveID(%q): %v, want not found", in, err)
		}
	}
}
