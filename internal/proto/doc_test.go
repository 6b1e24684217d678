package proto

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProtocolDocCoversEveryType reads docs/protocol.md: every message,
// event and shared object has its section, each event names its header,
// and each section's table lists exactly the type's own fields, with
// "required" yes exactly for the fields always encoded.
func TestProtocolDocCoversEveryType(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	check := func(part, name string, v any, sections map[string]string) {
		t.Helper()
		text, ok := sections[name]
		if !ok {
			t.Errorf("docs/protocol.md %s: no section for %q", part, name)
			return
		}
		delete(sections, name)
		if want, got := ownFields(reflect.TypeOf(v)), tableFields(text); !cmp.Equal(want, got) {
			t.Errorf("docs/protocol.md %s %q: table (-type +doc):\n%s", part, name, cmp.Diff(want, got))
		}
		if ev, ok := v.(Event); ok {
			if want := "Header: " + headerKind(ev) + "."; !strings.Contains(text, want) {
				t.Errorf("docs/protocol.md event %q does not say %q", name, want)
			}
		}
	}
	messages := sections(t, doc, "## 5. ")
	for _, typ := range MessageTypes() {
		check("messages", typ, NewMessage(typ), messages)
	}
	events := sections(t, doc, "## 6. ")
	for _, typ := range EventTypes() {
		check("events", typ, NewEvent(typ), events)
	}
	objects := sections(t, doc, "## 4. ")
	for name, v := range map[string]any{"peer": &Peer{}, "usage": &Usage{}, "status": &DaemonStatus{}, "delegations": &Delegations{}, "database": &Database{},
		"stored_session": &StoredSession{}, "stored_turn": &StoredTurn{}, "diff": &Diff{}, "grant": &Grant{}, "clawbot_account": &ClawbotAccount{}, "undo_file": &UndoFile{},
		"daemon_provider": &DaemonProvider{}, "mcp_server": &MCPServer{}, "image": &Image{}, "todo_item": &TodoItem{}} {
		check("objects", name, v, objects)
	}
	for _, rest := range []map[string]string{messages, events, objects} {
		for name := range rest {
			t.Errorf("docs/protocol.md has a section for %q, which is no type of internal/proto", name)
		}
	}
}

var headingName = regexp.MustCompile("^### (?:Object )?`([a-z._]+)`")

// sections splits the part of doc that starts with the heading prefix into
// its ### sections, keyed by the name in backquotes.
func sections(t *testing.T, doc, prefix string) map[string]string {
	t.Helper()
	i := strings.Index(doc, "\n"+prefix)
	if i < 0 {
		t.Fatalf("docs/protocol.md has no heading %q", prefix)
	}
	part := doc[i+1:]
	if j := strings.Index(part[len(prefix):], "\n## "); j >= 0 {
		part = part[:len(prefix)+j]
	}
	out := map[string]string{}
	for _, sec := range strings.Split(part, "\n### ")[1:] {
		sec = "### " + sec
		m := headingName.FindStringSubmatch(sec)
		if m == nil {
			t.Errorf("docs/protocol.md: cannot read the heading of %q", strings.SplitN(sec, "\n", 2)[0])
			continue
		}
		out[m[1]] = sec
	}
	return out
}

var tableRow = regexp.MustCompile("(?m)^\\| `([a-z_0-9]+)` \\| [^|]+ \\| (yes|no) \\|")

// tableFields maps the fields of a section's table to whether they are
// required.
func tableFields(section string) map[string]bool {
	out := map[string]bool{}
	for _, m := range tableRow.FindAllStringSubmatch(section, -1) {
		out[m[1]] = m[2] == "yes"
	}
	return out
}

// ownFields maps the JSON fields a type declares itself (not those of an
// embedded envelope or header) to whether they are always encoded.
func ownFields(t reflect.Type) map[string]bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		out[name] = !strings.Contains(opts, "omitempty")
	}
	return out
}

func headerKind(ev Event) string {
	switch ev.(type) {
	case TurnEvent:
		return "turn"
	case SessionEvent:
		return "session"
	}
	return "basic"
}
