package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

// clawbotDaemon starts the real daemon (extra config lines added) with its
// bridge logged in to a fake iLink service (set up by ilinkSetup, when
// set, before the daemon starts) and a fake model that answers n messages
// with "ok" at once, and waits for the bridge's first poll; stop ends the
// daemon.
func clawbotDaemon(b *testing.B, n int, extra string, ilinkSetup func(*ilinktest.Server)) (model *modeltest.Server, ilink *ilinktest.Server, pid int, stop func()) {
	b.Helper()
	model = modeltest.New(b)
	for range n {
		model.Script(modeltest.Text("ok"))
	}
	ilink = ilinktest.New(b)
	ilink.SetIdleHold(time.Minute)
	if ilinkSetup != nil {
		ilinkSetup(ilink)
	}
	in := benchInstance(b, b.TempDir(), providerConfig(model.URL(), extra))
	loginBot(b, in.home, map[string]string{"bot_token": "tok", "ilink_bot_id": "bot", "ilink_user_id": "owner", "baseurl": ilink.URL()})
	pid, _, stop = benchDaemon(b, in)
	if !ilink.WaitFor(30*time.Second, func() bool { return len(ilink.Cursors()) > 0 }) {
		stop()
		b.Fatal("the bridge did not poll")
	}
	return model, ilink, pid, stop
}

// answeredOnce checks that each of the n messages (context tokens ctx-0
// …) was answered exactly once.
func answeredOnce(b *testing.B, sent []ilinktest.Sent, n int) {
	b.Helper()
	seen := map[string]int{}
	for _, s := range sent {
		seen[s.ContextToken]++
	}
	for i := range n {
		if c := seen[fmt.Sprint("ctx-", i)]; c != 1 {
			b.Fatalf("message %d answered %d times", i, c)
		}
	}
}

// BenchmarkClawbotBurst sends a burst of 1,000 WeChat messages from 50
// senders to the real daemon (fake iLink service and fake model in this
// process, the model answering at once) and checks that every message is
// answered exactly once. It reports the wall time from the first message
// to the last reply and the daemon's peak resident memory.
//
//	go test ./internal/e2e -run '^$' -bench ClawbotBurst -benchtime 1x
func BenchmarkClawbotBurst(b *testing.B) {
	const messages, senders = 1000, 50
	var wall time.Duration
	var hwm float64
	for range b.N {
		// Every message is to run a turn: each sender's 20 messages may
		// wait at once (the default holds 8 per sender).
		model, ilink, pid, stop := clawbotDaemon(b, messages, "[clawbot]\nmax_queue_per_sender = 20", nil)
		start := time.Now()
		for batch := range 10 {
			var msgs []any
			for i := range messages / 10 {
				n := batch*messages/10 + i
				msgs = append(msgs, ilinktest.Text(n, fmt.Sprint("sender-", n%senders), fmt.Sprint("message ", n)))
			}
			ilink.Post(msgs...)
		}
		ok := ilink.WaitFor(5*time.Minute, func() bool { return len(ilink.Sent()) >= messages })
		wall += time.Since(start)
		hwm = max(hwm, procStatusKB(b, pid, "VmHWM"))
		time.Sleep(300 * time.Millisecond) // a duplicate would arrive by now
		sent := ilink.Sent()
		stop()
		if !ok {
			b.Fatalf("%d of %d messages answered", len(sent), messages)
		}
		answeredOnce(b, sent, messages)
		if len(sent) != messages || len(model.Requests()) != messages {
			b.Fatalf("%d replies and %d model requests for %d messages", len(sent), len(model.Requests()), messages)
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "burst-s")
	b.ReportMetric(hwm/1024, "daemon-HWM-MiB")
}

// BenchmarkClawbotFlood floods the real daemon with 20 messages from each
// of 1,000 senders, all posted at once (the fake iLink service hands them
// out 1,000 per poll, the fake model answers at once), and checks that
// every message is answered exactly once, by its turn or by the busy
// reply. It runs twice: with the default bounds, and with the bounds (and
// protocol.max_sessions) lifted so far that nothing is refused for one,
// which is how the bridge held a flood before it had bounds. It reports
// the daemon's peak resident memory (VmHWM) of each, the wall time until
// the last reply and how many messages ran a turn.
//
//	go test ./internal/e2e -run '^$' -bench ClawbotFlood -benchtime 1x
func BenchmarkClawbotFlood(b *testing.B) {
	const senders, each = 1000, 20
	runs := []struct{ name, config string }{
		{"bounded", ""},
		{"unbounded", "[clawbot]\nmax_queue_per_sender = 1000\nmax_conversations = 100000\nmax_queued_bytes = 1000000000\n[protocol]\nmax_sessions = 100000\nmax_sessions_per_connection = 100000"},
	}
	for _, run := range runs {
		b.Run(run.name, func(b *testing.B) {
			var wall time.Duration
			var hwm float64
			turns := 0
			for range b.N {
				model, ilink, pid, stop := clawbotDaemon(b, senders*each, run.config, func(s *ilinktest.Server) { s.SetMaxBatch(1000) })
				start := time.Now()
				var msgs []any
				for k := range each {
					for s := range senders {
						n := k*senders + s
						msgs = append(msgs, ilinktest.Text(n, fmt.Sprint("sender-", s), fmt.Sprint("message ", n)))
					}
				}
				ilink.Post(msgs...)
				ok := ilink.WaitFor(10*time.Minute, func() bool { return ilink.SentCount() >= senders*each })
				wall += time.Since(start)
				hwm = max(hwm, procStatusKB(b, pid, "VmHWM"))
				time.Sleep(300 * time.Millisecond) // a duplicate would arrive by now
				sent := ilink.Sent()
				stop()
				if !ok {
					b.Fatalf("%d of %d messages answered", len(sent), senders*each)
				}
				answeredOnce(b, sent, senders*each)
				answered := 0
				for _, s := range sent {
					if s.Text == "ok" {
						answered++
					}
				}
				if len(sent) != senders*each || len(model.Requests()) != answered {
					b.Fatalf("%d replies and %d model requests for %d messages, %d answered by the model", len(sent), len(model.Requests()), senders*each, answered)
				}
				turns = answered
			}
			b.ReportMetric(wall.Seconds()/float64(b.N), "flood-s")
			b.ReportMetric(hwm/1024, "daemon-HWM-MiB")
			b.ReportMetric(float64(turns), "turns")
		})
	}
}
