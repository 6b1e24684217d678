//go:build ignore

// fs_call runs one read or write call through the same tool code as `scv
// tools call` (tool.Registry Prepare, then Run) in a minimal process without
// the scv binary's configuration, command line and start-up, and prints the
// same object. bench/fs_tools.sh times it beside the real `scv tools call`
// to tell the tools' own cost from the binary's start-up.
//
//	go build -o /tmp/fs_call bench/fs_call.go
//	fs_call read '{"path":"f.txt"}'     # workspace = current directory
//	fs_call write - < args.json          # arguments from stdin
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/scv-agent/scv/internal/tool"
	"github.com/scv-agent/scv/internal/tools/fs"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fs_call read|write JSON|-")
		os.Exit(2)
	}
	args := []byte(os.Args[2])
	if os.Args[2] == "-" {
		var err error
		if args, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	ws, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	reg, err := tool.NewRegistry(fs.NewRead(fs.Options{}), fs.NewWrite(fs.Options{}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	plan, res, ok := reg.Prepare(tool.Env{Workspace: ws}, os.Args[1], args)
	if ok {
		res = plan.Run(context.Background())
	}
	out := map[string]any{"name": os.Args[1], "success": res.Success, "output": res.Output, "truncated": res.Truncated}
	if res.JSON {
		out["output"] = json.RawMessage(res.Output)
	}
	if !res.Success {
		out["error"] = res.Error
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
	if !res.Success {
		os.Exit(1)
	}
}
