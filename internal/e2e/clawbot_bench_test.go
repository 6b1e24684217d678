package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

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
		model := modeltest.New(b)
		for range messages {
			model.Script(modeltest.Text("ok"))
		}
		ilink := ilinktest.New(b)
		ilink.SetIdleHold(time.Minute)
		in := benchInstance(b, b.TempDir(), providerConfig(model.URL()))
		loginBot(b, in.home, map[string]string{"bot_token": "tok", "ilink_bot_id": "bot", "ilink_user_id": "owner", "baseurl": ilink.URL()})
		pid, _, stop := benchDaemon(b, in)
		if !ilink.WaitFor(30*time.Second, func() bool { return len(ilink.Cursors()) > 0 }) {
			stop()
			b.Fatal("the bridge did not poll")
		}
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
		seen := map[string]int{}
		for _, s := range sent {
			seen[s.ContextToken]++
		}
		for n := range messages {
			if c := seen[fmt.Sprint("ctx-", n)]; c != 1 {
				b.Fatalf("message %d answered %d times", n, c)
			}
		}
		if len(sent) != messages || len(model.Requests()) != messages {
			b.Fatalf("%d replies and %d model requests for %d messages", len(sent), len(model.Requests()), messages)
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "burst-s")
	b.ReportMetric(hwm/1024, "daemon-HWM-MiB")
}
