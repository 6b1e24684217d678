package testutil

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A connection a process made just before it exited is counted by
// Settled, however far the accept loop lags; the probes are not.
func TestSettledCountsWhatAnExitedProcessConnected(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for /dev/tcp")
	}
	l := ListenOn(t, "tcp4", "127.0.0.1:0")
	for i := int64(1); i <= 20; i++ {
		if out, err := exec.Command("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+l.Port()).CombinedOutput(); err != nil {
			t.Fatalf("connect %d: %v %s", i, err, out)
		}
		if got := l.Settled(t); got != i {
			t.Fatalf("after %d connections Settled = %d", i, got)
		}
	}
}

// A Unix listener sees the probe's bound address, so its probe is not
// counted either.
func TestSettledOnAUnixSocket(t *testing.T) {
	l := ListenOn(t, "unix", filepath.Join(TempDir(t), "s.sock"))
	if got := l.Settled(t); got != 0 {
		t.Fatalf("Settled before any connection = %d, want 0", got)
	}
	if out, err := exec.Command("python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", l.NetAddr().String()).CombinedOutput(); err != nil {
		t.Skipf("needs python3 to connect: %v %s", err, out)
	}
	if got := l.Settled(t); got != 1 {
		t.Fatalf("Settled after one connection = %d, want 1", got)
	}
}
