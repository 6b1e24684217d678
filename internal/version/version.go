// Package version holds SCV's version string, set at link time with
// -ldflags "-X github.com/scv-agent/scv/internal/version.Version=…".
package version

import "runtime/debug"

// Version is the release version; "dev" for local builds.
var Version = "0.1.0-dev"

// Commit returns the VCS revision recorded by the Go toolchain, if any.
func Commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// UserAgent is the User-Agent SCV sends (web_fetch, search backends).
func UserAgent() string { return "scv/" + Version }
