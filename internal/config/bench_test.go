package config

import (
	"testing"
)

// BenchmarkLoad measures a start-up load with a user config, a project
// config and env and flag overrides.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	f := fixture{dir: dir}
	f.home.Home = dir + "/home"
	f.ws = dir + "/ws"
	if err := f.home.Ensure(); err != nil {
		b.Fatal(err)
	}
	writeFile(b, f.home.ConfigFile(), CommentedTemplate()+"\n[providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\nheaders = { X-A = \"1\" }\n[tools]\ncommand_timeout_seconds = 300\n", 0o600)
	writeFile(b, dir+"/ws/.scv/config.toml", "[tools]\napproval_policy = \"always\"\nmax_read_bytes = 100000\n[web]\nenabled = false\n", 0o600)
	opts := f.opts()
	opts.Env["SCV_MODEL"] = "m"
	opts.Flags.Provider = "local"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(opts); err != nil {
			b.Fatal(err)
		}
	}
}
