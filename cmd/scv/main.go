// Command scv is the SCV agent runtime: server, daemon, headless exec, tools
// and terminal UI in one executable.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/scv-agent/scv/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.Environ(os.Environ()))
	stop()
	os.Exit(code)
}
