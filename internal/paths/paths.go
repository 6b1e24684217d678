// Package paths derives the layout of an SCV instance home ($SCV_HOME,
// default ~/.scv) as pure functions of the home directory and the
// environment, and settles a workspace directory in its canonical form.
// Nothing else in SCV builds these paths by hand.
package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Layout is one instance home.
type Layout struct {
	// Home is the absolute instance home.
	Home string
}

// Resolve picks the instance home: the --scv-home flag, else SCV_HOME, else
// ~/.scv under the HOME of env. A custom home never falls back to ~/.scv.
func Resolve(flagHome string, env map[string]string) (Layout, error) {
	home := flagHome
	if home == "" {
		home = env["SCV_HOME"]
	}
	if home == "" {
		userHome := env["HOME"]
		if userHome == "" {
			return Layout{}, errors.New("cannot locate the instance home: neither --scv-home, SCV_HOME nor HOME is set")
		}
		home = filepath.Join(userHome, ".scv")
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return Layout{}, fmt.Errorf("instance home %q: %w", home, err)
	}
	return Layout{Home: abs}, nil
}

// UserHome is the invoking user's home directory from env (HOME).
func UserHome(env map[string]string) string { return env["HOME"] }

// ConfigFile is the user config, $SCV_HOME/config.toml.
func (l Layout) ConfigFile() string { return filepath.Join(l.Home, "config.toml") }

// SkillsDir is the user skills root, $SCV_HOME/skills.
func (l Layout) SkillsDir() string { return filepath.Join(l.Home, "skills") }

// CommandsDir holds the user's custom slash commands, $SCV_HOME/commands.
func (l Layout) CommandsDir() string { return filepath.Join(l.Home, "commands") }

// Socket is the daemon socket, $SCV_HOME/server.sock.
func (l Layout) Socket() string { return filepath.Join(l.Home, "server.sock") }

// Lock is the daemon lock file, $SCV_HOME/server.lock.
func (l Layout) Lock() string { return filepath.Join(l.Home, "server.lock") }

// Delegations is the record directory, $SCV_HOME/run/delegations.
func (l Layout) Delegations() string { return filepath.Join(l.Home, "run", "delegations") }

// DelegationRecord is the record file of one handle.
func (l Layout) DelegationRecord(handle string) string {
	return filepath.Join(l.Delegations(), handle+".json")
}

// Calls holds the records of in-flight tool calls, $SCV_HOME/run/calls.
func (l Layout) Calls() string { return filepath.Join(l.Home, "run", "calls") }

// Adapters is the root of the private agent homes, $SCV_HOME/adapters.
func (l Layout) Adapters() string { return filepath.Join(l.Home, "adapters") }

// Adapter is the private home of one delegated agent, $SCV_HOME/adapters/<name>.
func (l Layout) Adapter(name string) string { return filepath.Join(l.Adapters(), name) }

// State is the directory of the session database, $SCV_HOME/state
// (created 0700 by the store).
func (l Layout) State() string { return filepath.Join(l.Home, "state") }

// Database is the session database, $SCV_HOME/state/scv.db (0600; SQLite
// keeps scv.db-wal and scv.db-shm beside it).
func (l Layout) Database() string { return filepath.Join(l.State(), "scv.db") }

// Logs is $SCV_HOME/logs.
func (l Layout) Logs() string { return filepath.Join(l.Home, "logs") }

// DaemonLog is the background daemon's log file.
func (l Layout) DaemonLog() string { return filepath.Join(l.Logs(), "daemon.log") }

// Clawbot is the WeChat bridge's directory, $SCV_HOME/clawbot.
func (l Layout) Clawbot() string { return filepath.Join(l.Home, "clawbot") }

// ClawbotAccounts holds the bridge's credentials, one file per account.
func (l Layout) ClawbotAccounts() string { return filepath.Join(l.Clawbot(), "accounts") }

// ClawbotSettings holds the bridge's settings, one file per account.
func (l Layout) ClawbotSettings() string { return filepath.Join(l.Clawbot(), "settings") }

// ProjectConfig is the project config of a workspace, <ws>/.scv/config.toml.
func ProjectConfig(workspace string) string {
	return filepath.Join(workspace, ".scv", "config.toml")
}

// Ensure creates the home (0700) and tightens its mode if it already exists
// with wider permissions.
func (l Layout) Ensure() error {
	if err := os.MkdirAll(l.Home, 0o700); err != nil {
		return fmt.Errorf("create instance home: %w", err)
	}
	st, err := os.Stat(l.Home)
	if err != nil {
		return fmt.Errorf("instance home: %w", err)
	}
	if st.Mode().Perm() != 0o700 {
		if err := os.Chmod(l.Home, 0o700); err != nil {
			return fmt.Errorf("instance home: %w", err)
		}
	}
	return nil
}

// EnsureDir creates dir (and parents) with mode 0700.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// CanonicalDir requires an absolute existing directory and resolves
// symlinks: how session.start, `scv tools call --workspace` and a WeChat
// bridge account's workspace setting settle a workspace.
func CanonicalDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("an absolute directory is required")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q must be an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%q: %v", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%q: %v", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%q is not a directory", dir)
	}
	return filepath.Clean(real), nil
}
