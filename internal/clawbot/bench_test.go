package clawbot_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

// BenchmarkBridgeOverhead measures one message's way through the bridge:
// from the moment the service has it (the held poll answers at once) to
// the reply's sendmessage, with a fake iLink server and a fake model that
// answer at once, over the real server, app and store (batch and claim
// stored, turn run, reply stored, sent, recorded as sent). Each message
// follows the previous reply, from one sender (one session). It reports
// the median and 99th percentile of those latencies.
//
//	go test ./internal/clawbot -run '^$' -bench BridgeOverhead -benchtime 300x
func BenchmarkBridgeOverhead(b *testing.B) {
	h := newHarness(b)
	d := newRealDaemon(b, h, "")
	h.fake.SetIdleHold(time.Minute) // a poll waits for the next message
	for range b.N + 1 {
		d.model.Script(modeltest.Text("ok"))
	}
	h.start()
	// One message first: the session starts and the connection warms up.
	h.fake.Post(ilinktest.Text(0, "alice", "warm up"))
	h.waitSent(1)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		h.fake.Post(ilinktest.Text(i+1, "alice", fmt.Sprint("message ", i+1)))
		h.waitSent(i + 2)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	h.stop()
}
