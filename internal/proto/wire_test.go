package proto

import (
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata/wire.txtar")

// TestRegistries: NewEvent and NewMessage give, for every listed type, a
// value of a distinct Go type that names that type back.
func TestRegistries(t *testing.T) {
	seen := map[reflect.Type]string{}
	for _, typ := range EventTypes() {
		ev := NewEvent(typ)
		if ev == nil || ev.EventType() != typ {
			t.Errorf("NewEvent(%q) = %T, which names %q", typ, ev, eventType(ev))
			continue
		}
		if other, dup := seen[reflect.TypeOf(ev)]; dup {
			t.Errorf("%T serves both %q and %q", ev, other, typ)
		}
		seen[reflect.TypeOf(ev)] = typ
	}
	for _, typ := range MessageTypes() {
		m := NewMessage(typ)
		if m == nil || m.MessageType() != typ {
			t.Errorf("NewMessage(%q) = %T", typ, m)
			continue
		}
		if other, dup := seen[reflect.TypeOf(m)]; dup {
			t.Errorf("%T serves both %q and %q", m, other, typ)
		}
		seen[reflect.TypeOf(m)] = typ
	}
	if NewEvent("no.such") != nil || NewMessage("no.such") != nil {
		t.Error("an unknown type gave a value")
	}
}

func eventType(ev Event) string {
	if ev == nil {
		return ""
	}
	return ev.EventType()
}

// TestSourceAndRegistriesAgree reads this package's source: every Event*
// and Type* constant is in EventTypes or MessageTypes, and every type with
// an EventType or MessageType method is what NewEvent or NewMessage gives
// for the constant that method returns. A message or event added to one
// place and not the others fails here.
func TestSourceAndRegistriesAgree(t *testing.T) {
	consts, methods := scanSource(t)
	for name, val := range consts {
		switch {
		case strings.HasPrefix(name, "Event") && !slices.Contains(EventTypes(), val):
			t.Errorf("constant %s = %q is not in EventTypes (nor in NewEvent)", name, val)
		case strings.HasPrefix(name, "Type") && !slices.Contains(MessageTypes(), val):
			t.Errorf("constant %s = %q is not in MessageTypes (nor in NewMessage)", name, val)
		}
	}
	if len(methods) == 0 {
		t.Fatal("found no EventType or MessageType methods")
	}
	for _, m := range methods {
		val, ok := consts[m.returns]
		if !ok {
			t.Errorf("(*%s).%s returns %s, not an Event* or Type* constant", m.recv, m.name, m.returns)
			continue
		}
		var got any
		if m.name == "EventType" {
			got = NewEvent(val)
		} else {
			got = NewMessage(val)
		}
		if got == nil || reflect.TypeOf(got).Elem().Name() != m.recv {
			t.Errorf("%s %q decodes into %T, want *%s", strings.TrimSuffix(m.name, "Type"), val, got, m.recv)
		}
	}
}

type typeMethod struct{ recv, name, returns string }

// scanSource returns the string constants named Event* and Type* and the
// EventType/MessageType methods of the package's non-test files.
func scanSource(t *testing.T) (map[string]string, []typeMethod) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var methods []typeMethod
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch d := n.(type) {
			case *ast.ValueSpec:
				for i, id := range d.Names {
					if i >= len(d.Values) || !(strings.HasPrefix(id.Name, "Event") || strings.HasPrefix(id.Name, "Type")) {
						continue
					}
					if lit, ok := d.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[id.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || (d.Name.Name != "EventType" && d.Name.Name != "MessageType") {
					return false
				}
				star, ok := d.Recv.List[0].Type.(*ast.StarExpr)
				if !ok || len(d.Body.List) != 1 {
					return false
				}
				ret, ok := d.Body.List[0].(*ast.ReturnStmt)
				if !ok || len(ret.Results) != 1 {
					return false
				}
				id, ok := ret.Results[0].(*ast.Ident)
				if !ok {
					return false // Unknown returns its own field
				}
				methods = append(methods, typeMethod{recv: star.X.(*ast.Ident).Name, name: d.Name.Name, returns: id.Name})
				return false
			}
			return true
		})
	}
	return consts, methods
}

// filled returns v (a pointer to a struct) with every field set: strings
// to their JSON name after a $, numbers to 1, booleans to true,
// raw JSON to {}, pointers allocated and slices given one element.
func filled[T any](v T) T {
	fill(reflect.ValueOf(v).Elem(), "")
	return v
}

func fill(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			tag := strings.Split(sf.Tag.Get("json"), ",")[0]
			if tag == "-" || sf.Name == "Type" {
				continue
			}
			fill(v.Field(i), tag)
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name)
	case reflect.String:
		v.SetString("$" + name)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint64:
		v.SetUint(1)
	case reflect.Bool:
		v.SetBool(true)
	}
}

// TestWire records, in testdata/wire.txtar, how every event and message
// encodes: with every field at its zero value (the line then holds exactly
// the required fields) and with every field set (all fields, in wire
// order). Decoding the full line gives the value back. go test -update
// rewrites the file; a change to it is a change of the protocol.
func TestWire(t *testing.T) {
	var got txtar.Archive
	for _, typ := range EventTypes() {
		zero, err := EncodeEvent(NewEvent(typ))
		if err != nil {
			t.Fatal(err)
		}
		full := filled(NewEvent(typ))
		line, err := EncodeEvent(full)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEvent(line)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if d := cmp.Diff(full, back); d != "" {
			t.Errorf("%s: decoding its encoding changed it (-sent +decoded):\n%s", typ, d)
		}
		got.Files = append(got.Files, txtar.File{Name: "event " + typ, Data: []byte(string(zero) + "\n" + string(line) + "\n")})
	}
	for _, typ := range MessageTypes() {
		zero, err := EncodeMessage(NewMessage(typ))
		if err != nil {
			t.Fatal(err)
		}
		full := filled(NewMessage(typ))
		line, err := EncodeMessage(full)
		if err != nil {
			t.Fatal(err)
		}
		back := NewMessage(typ)
		if err := json.Unmarshal(line, back); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if d := cmp.Diff(full, back); d != "" {
			t.Errorf("%s: decoding its encoding changed it (-sent +decoded):\n%s", typ, d)
		}
		got.Files = append(got.Files, txtar.File{Name: "message " + typ, Data: []byte(string(zero) + "\n" + string(line) + "\n")})
	}
	got.Comment = []byte("How every event and message encodes: first with every field at its zero value\n" +
		"(exactly the required fields), then with every field set (all fields, in wire order).\n" +
		"Written by go test ./internal/proto -run TestWire -update.\n")
	path := filepath.Join("testdata", "wire.txtar")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, txtar.Format(&got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if d := cmp.Diff(string(want), string(txtar.Format(&got))); d != "" {
		t.Errorf("the wire form changed (-want +got; go test -update accepts it):\n%s", d)
	}
}

// TestDecodeEvent covers the decoder's paths: a frame that does not start
// with its type, an escaped type name, an unknown type (kept whole) and
// broken frames.
func TestDecodeEvent(t *testing.T) {
	cases := []struct {
		name, line string
		want       Event
		err        string
	}{
		{"type first", `{"type":"turn.cancelled","session_id":"s","seq":3,"turn_id":"t"}`,
			&TurnCancelled{TurnHeader{SessionHeader{Header{Type: EventTurnCancelled}, "s", 3}, "t"}}, ""},
		{"type later", `{"request_id":"r","type":"error","code":"x","message":"m","fatal":true}`,
			&Error{Header: Header{Type: EventError, RequestID: "r"}, Code: "x", Message: "m", Fatal: true}, ""},
		{"escaped type", `{"type":"tool.progress","call_id":"c","text":"t"}`,
			&ToolProgress{TurnHeader: TurnHeader{SessionHeader: SessionHeader{Header: Header{Type: EventToolProgress}}}, CallID: "c", Text: "t"}, ""},
		{"unknown", `{"type":"turn.paused","request_id":"r","why":"x"}`,
			&Unknown{Header: Header{Type: "turn.paused", RequestID: "r"}, Raw: json.RawMessage(`{"type":"turn.paused","request_id":"r","why":"x"}`)}, ""},
		{"not JSON", `{"type":"turn.started",`, nil, "decode turn.started event"},
		{"wrong field type", `{"type":"turn.completed","steps":"two"}`, nil, "decode turn.completed event"},
		{"no object", `[1]`, nil, "decode event"},
	}
	cases[2].line = strings.Replace(cases[2].line, "tool.progress", `tool.pro\u0067ress`, 1)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeEvent([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestEncodeSetsType: the Go type decides the wire type, whatever the
// Type field held.
func TestEncodeSetsType(t *testing.T) {
	ev := &TurnStarted{}
	ev.Type = "something.else"
	b, err := EncodeEvent(ev)
	if err != nil || !strings.HasPrefix(string(b), `{"type":"turn.started",`) {
		t.Errorf("EncodeEvent = %s, %v", b, err)
	}
	m := &TurnCancel{Envelope: Envelope{Type: "x", RequestID: "r"}}
	b, err = EncodeMessage(m)
	if err != nil || string(b) != `{"type":"turn.cancel","request_id":"r","session_id":"","turn_id":""}` {
		t.Errorf("EncodeMessage = %s, %v", b, err)
	}
}
