package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// persist stores one generated turn the way the server will: begin, every
// event but the last appended (batched by the log), then complete with the
// last one, the history and the answer in one durable transaction.
func persist(tb testing.TB, s *Store, sid string, t genTurn) {
	ctx := context.Background()
	tl, err := s.BeginTurn(ctx, sid, t.ID, t.Prompt)
	if err != nil {
		tb.Fatal(err)
	}
	last := len(t.Events) - 1
	for _, e := range t.Events[:last] {
		if err := tl.Append(ctx, e); err != nil {
			tb.Fatal(err)
		}
	}
	err = tl.Complete(ctx, Completion{Events: t.Events[last:], History: HistoryUpdate{Append: t.History}, Usage: t.Usage, Answer: t.Answer})
	if err != nil {
		tb.Fatal(err)
	}
}

func payload(t genTurn) (events, history int) {
	for _, e := range t.Events {
		events += len(e.Data)
	}
	for _, m := range t.History {
		history += len(m)
	}
	return events, history
}

// BenchmarkPersistTurn: the cost of storing one realistic turn (begin +
// events + durable complete).
func BenchmarkPersistTurn(b *testing.B) {
	for _, c := range []struct {
		name         string
		deltas, bulk bool
	}{{"deltas", true, false}, {"no-deltas", false, false}, {"no-deltas-no-fsync", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			s := openTemp(b)
			s.bulk = c.bulk
			mustSession(b, s, "s")
			g := newGen(1)
			turns := make([]genTurn, 200)
			var ev, events int
			for i := range turns {
				turns[i] = g.turn("s", i, c.deltas)
				n, _ := payload(turns[i])
				ev += n
				events += len(turns[i].Events)
			}
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%len(turns) == 0 {
					b.StopTimer()
					for j := range turns {
						turns[j] = g.turn("s", i+j, c.deltas)
					}
					b.StartTimer()
				}
				persist(b, s, "s", turns[i%len(turns)])
			}
			// ResetTimer drops metrics reported before it.
			b.ReportMetric(float64(ev)/float64(len(turns)), "event-bytes/turn")
			b.ReportMetric(float64(events)/float64(len(turns)), "events/turn")
		})
	}
}

// BenchmarkSize1000Turns writes 1,000 realistic turns into one session and
// reports the database size (after a checkpoint) against the raw payload.
func BenchmarkSize1000Turns(b *testing.B) {
	for _, deltas := range []bool{true, false} {
		b.Run(map[bool]string{true: "deltas", false: "no-deltas"}[deltas], func(b *testing.B) {
			for range b.N {
				s := openTemp(b)
				s.bulk = true
				mustSession(b, s, "s")
				g := newGen(2)
				var ev, hist int
				for i := range 1000 {
					t := g.turn("s", i, deltas)
					e, h := payload(t)
					ev, hist = ev+e, hist+h
					persist(b, s, "s", t)
				}
				s.Compact(context.Background())
				st, err := s.Stats(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.FileBytes)/(1<<20), "db-MiB")
				b.ReportMetric(float64(ev)/(1<<20), "events-MiB")
				b.ReportMetric(float64(hist)/(1<<20), "history-MiB")
				s.Close()
			}
		})
	}
}

// The 10,000-session database of BenchmarkSearch, built once per run of
// the test binary (TestMain removes it).
var (
	searchOnce sync.Once
	searchDir  string
	searchErr  error
)

func searchDB(b *testing.B) string {
	searchOnce.Do(func() {
		searchDir, searchErr = os.MkdirTemp("", "store-bench-")
		if searchErr != nil {
			return
		}
		s, err := Open(context.Background(), Options{Path: filepath.Join(searchDir, "scv.db"), Holder: self})
		if err != nil {
			searchErr = err
			return
		}
		defer s.Close()
		s.bulk = true
		g := newGen(3)
		for i := range 10000 {
			sid := fmt.Sprintf("s%05d", i)
			if _, err := s.CreateSession(context.Background(), NewSession{ID: sid, Workspace: fmt.Sprintf("/home/u/p%d", i%20), Origin: OriginTUI}); err != nil {
				searchErr = err
				return
			}
			// Three turns per session, events kept small: search reads
			// prompts and answers only.
			for j := range 3 {
				t := g.turn(sid, j, false)
				t.Events = t.Events[len(t.Events)-1:]
				t.History = t.History[:1]
				persist(b, s, sid, t)
			}
		}
		s.Compact(context.Background())
	})
	if searchErr != nil {
		b.Fatal(searchErr)
	}
	return filepath.Join(searchDir, "scv.db")
}

// BenchmarkSearch: FTS over 10,000 sessions (30,000 turns).
func BenchmarkSearch(b *testing.B) {
	path := searchDB(b)
	s := openAt(b, path, nil)
	// Words by frequency rank in the generated prose (genVocab).
	for _, c := range []struct{ name, q string }{
		{"most-common-word", genVocab[0]},
		{"word-ranked-50", genVocab[50]},
		{"word-ranked-1000", genVocab[1000]},
		{"word-ranked-4000", genVocab[4000]},
		{"two-words", genVocab[50] + " " + genVocab[300]},
		{"prefix", genVocab[1000][:4]},
		{"no-match", "zyzzyva"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var hits int
			for range b.N {
				h, err := s.Search(context.Background(), c.q, SearchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			b.ReportMetric(float64(hits), "hits")
			b.ReportMetric(float64(matches(b, s, c.q)), "matching-turns")
		})
	}
	b.Run("word-ranked-50-one-workspace", func(b *testing.B) {
		for range b.N {
			if _, err := s.Search(context.Background(), genVocab[50], SearchOptions{Workspace: "/home/u/p7"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list-50", func(b *testing.B) {
		for range b.N {
			if _, err := s.ListSessions(context.Background(), ListOptions{Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// matches counts the turns a search matches (beyond its limit).
func matches(b *testing.B, s *Store, q string) int {
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM search WHERE search MATCH ?`, ftsQuery(q)).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkLoad1000: resuming a session of 1,000 realistic turns, whole
// and as a tail.
func BenchmarkLoad1000(b *testing.B) {
	s := openTemp(b)
	s.bulk = true
	mustSession(b, s, "s")
	g := newGen(4)
	for i := range 1000 {
		persist(b, s, "s", g.turn("s", i, false))
	}
	s.Compact(context.Background())
	for _, c := range []struct {
		name string
		o    LoadOptions
	}{{"all", LoadOptions{}}, {"tail-50", LoadOptions{TailTurns: 50}}, {"tail-4MiB", LoadOptions{MaxEventBytes: 4 << 20}}} {
		b.Run(c.name, func(b *testing.B) {
			var bytes, turns int
			for range b.N {
				l, err := s.Load(context.Background(), "s", c.o)
				if err != nil {
					b.Fatal(err)
				}
				bytes, turns = 0, len(l.Turns)
				for _, t := range l.Turns {
					for _, e := range t.Events {
						bytes += len(e.Data)
					}
				}
				for _, m := range l.History {
					bytes += len(m)
				}
			}
			b.ReportMetric(float64(bytes)/(1<<20), "MiB")
			b.ReportMetric(float64(turns), "turns")
		})
	}
}

// BenchmarkOpen: opening an existing database and answering one query.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "scv.db")
	s := openAt(b, path, nil)
	mustSession(b, s, "s")
	s.Close()
	for range b.N {
		s, err := Open(context.Background(), Options{Path: path})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Session(context.Background(), "s"); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// tenStepTurn is the store's share of the server's scripted 10-step turn
// (BenchmarkTurn10Steps in internal/server): 47 events, of which 10
// tool.completed events carry a 4 KiB file, and 22 history messages (the
// prompt, 10 tool calls and their 4 KiB results, the answer).
func tenStepTurn(sid string, n int, seq uint64) (prompt string, events []Event, history []json.RawMessage) {
	src := make([]byte, 4096)
	for i := range src {
		src[i] = "abcdefghij klmnopqrstuvwxyz\n"[i%28]
	}
	file, _ := json.Marshal(string(src))
	tid := fmt.Sprintf("%s-t%d", sid, n)
	head := func(typ string) string {
		seq++
		return fmt.Sprintf(`{"type":%q,"session_id":%q,"turn_id":%q,"seq":%d`, typ, sid, tid, seq)
	}
	add := func(s string) { events = append(events, Event{Seq: seq, Data: json.RawMessage(s + "}")}) }
	prompt = "read a.go ten times"
	add(head("turn.started") + `,"request_id":"r1"`)
	history = append(history, msg("user", prompt))
	for i := range 10 {
		call := fmt.Sprintf(`{"id":"c%d","name":"read","arguments":"{\"path\":\"a.go\"}"}`, i)
		add(head("assistant.completed") + `,"content":"","tool_calls":[` + call + `]`)
		add(head("tool.proposed") + fmt.Sprintf(`,"call_id":"c%d","name":"read","arguments":{"path":"a.go"},"summary":"read a.go"`, i))
		add(head("tool.started") + fmt.Sprintf(`,"call_id":"c%d"`, i))
		add(head("tool.completed") + fmt.Sprintf(`,"call_id":"c%d","ok":true,"output":%s`, i, file))
		history = append(history, json.RawMessage(`{"role":"assistant","tool_calls":[`+call+`]}`),
			json.RawMessage(fmt.Sprintf(`{"role":"tool","tool_call_id":"c%d","content":%s}`, i, file)))
	}
	for range 4 {
		add(head("assistant.delta") + `,"text":"All ten files "`)
	}
	add(head("assistant.completed") + `,"content":"All ten files read; the answer is short."`)
	add(head("turn.completed") + `,"usage":{"input_tokens":3000,"output_tokens":20,"total_tokens":3020}`)
	history = append(history, msg("assistant", "All ten files read; the answer is short."))
	return prompt, events, history
}

// BenchmarkPersistTurn10Steps is what the server stores for its scripted
// 10-step turn, alone: begin, 46 events appended (one batch), a durable
// completion with the last event and 22 history messages. no-fsync skips
// the completion's fsync (the cost without the disk).
func BenchmarkPersistTurn10Steps(b *testing.B) {
	for _, bulk := range []bool{false, true} {
		b.Run(map[bool]string{false: "fsync", true: "no-fsync"}[bulk], func(b *testing.B) {
			s := openTemp(b)
			s.bulk = bulk
			ctx := context.Background()
			var seq uint64
			n := 0
			for b.Loop() {
				// A new session every 50 turns keeps the history, and so
				// the work per turn, the same size.
				if n%50 == 0 {
					b.StopTimer()
					mustSession(b, s, fmt.Sprint("s", n))
					seq = 0
					b.StartTimer()
				}
				sid := fmt.Sprint("s", n/50*50)
				n++
				prompt, events, history := tenStepTurn(sid, n, seq)
				seq = events[len(events)-1].Seq
				tl, err := s.BeginTurn(ctx, sid, fmt.Sprintf("%s-t%d", sid, n), prompt)
				if err != nil {
					b.Fatal(err)
				}
				last := len(events) - 1
				for _, e := range events[:last] {
					if err := tl.Append(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
				if err := tl.Complete(ctx, Completion{Events: events[last:], History: HistoryUpdate{Append: history}, Answer: "All ten files read."}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
