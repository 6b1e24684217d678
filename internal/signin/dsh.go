package signin

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/scv-agent/scv/internal/delegation"
)

// dsh is DeepSeek Harness: SCV writes its key file.
type dsh struct{ Agent }

// dshCredentials are the files whose presence means a stored key.
var dshCredentials = []string{".dsh/.credentials.yaml"}

// dshCredentialFile is DeepSeek Harness's own credential file in its home.
func dshCredentialFile(home string) string {
	return filepath.Join(home, ".dsh", ".credentials.yaml")
}

func (d dsh) Login(_ context.Context, io IO, req LoginRequest) error {
	if err := notCompatible(req); err != nil {
		return err
	}
	if len(req.Extra) > 0 {
		return usage("dsh takes no extra arguments; the key is read from the terminal or stdin, never from arguments")
	}
	key, err := io.Prompt.Secret("DeepSeek API key: ")
	if err != nil {
		return err
	}
	if err := d.writeKey(key); err != nil {
		return fmt.Errorf("dsh key: %w", err)
	}
	fmt.Fprintf(io.Out, "dsh: key stored in %s (mode 0600)\n", dshCredentialFile(d.Home))
	return nil
}

// writeKey stores key as refs.DEEPSEEK_API_KEY in DeepSeek Harness's
// credential file, atomically with mode 0600.
func (d dsh) writeKey(key string) error {
	if err := validKey(key); err != nil {
		return err
	}
	if err := d.EnsureHome(d.Home); err != nil {
		return err
	}
	body := "# Written by `scv agents login dsh`.\nrefs:\n  DEEPSEEK_API_KEY: " + strconv.Quote(key) + "\n"
	return delegation.WriteFileAtomic(dshCredentialFile(d.Home), []byte(body), 0o600)
}

func (d dsh) Logout(_ context.Context, io IO, _ []string) error {
	ok, err := removeFile(dshCredentialFile(d.Home))
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintln(io.Out, "dsh: key removed")
	} else {
		fmt.Fprintln(io.Out, "dsh: no key was stored")
	}
	return nil
}

func (d dsh) Status(context.Context) string { return d.credentialSummary(dshCredentials) }

func (d dsh) Import(context.Context, IO, ImportRequest) error { return noImport() }
