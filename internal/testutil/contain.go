package testutil

import "fmt"

// EscapeeScript is a shell command whose background child leaves the
// process group and scrubs its environment (`env -i setsid`), writes its
// pid to pidFile and sleeps; the command returns once the pid is written.
func EscapeeScript(pidFile string) string {
	return fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 & while [ ! -s %[1]s ]; do sleep 0.01; done`, pidFile)
}
