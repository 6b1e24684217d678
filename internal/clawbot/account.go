package clawbot

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scv-agent/scv/internal/paths"
)

// DefaultAccount is the account name when none is given.
const DefaultAccount = "default"

// maxAccountName bounds an account name.
const maxAccountName = 64

// maxFile bounds a credentials or settings file.
const maxFile = 64 << 10

// Remote tool authority of an account.
const (
	// RemoteToolsNone gives every remote sender a tool-free session.
	RemoteToolsNone = "none"
	// RemoteToolsOwner gives the account's owner, in a direct chat, a
	// session with tools whose approvals the bridge grants.
	RemoteToolsOwner = "owner"
)

// CheckAccount validates an account name: 1 to 64 ASCII letters, digits,
// '_' or '-'.
func CheckAccount(name string) error {
	if name == "" {
		return errors.New("empty account name")
	}
	if len(name) > maxAccountName {
		return fmt.Errorf("account name %.20q… is %d bytes, longer than %d", name, len(name), maxAccountName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("account name %q may hold only ASCII letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

// CheckBaseURL validates an iLink base URL and returns it without a
// trailing slash: https, or http for a loopback address only; no user
// information, query or fragment.
func CheckBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("base URL %q: %v", raw, err)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("base URL %q must be scheme://host[:port][/path], without user, query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback(u.Hostname()) {
			return "", fmt.Errorf("base URL %q: http:// is accepted only for a loopback address (127.0.0.1, [::1], localhost); use https://", raw)
		}
	default:
		return "", fmt.Errorf("base URL %q must use https://", raw)
	}
	u.Host = strings.ToLower(u.Host)
	u.Scheme = strings.ToLower(u.Scheme)
	return strings.TrimRight(u.String(), "/"), nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// origin is scheme://host[:port] of a checked base URL.
func origin(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Scheme + "://" + u.Host
}

// Credentials are what a login returned for one bot.
type Credentials struct {
	Token Token
	// BotID is ilink_bot_id; UserID is ilink_user_id, the account's owner:
	// the WeChat user who scanned the code.
	BotID   string
	UserID  string
	BaseURL string
}

// Fingerprint identifies the identity the account's state belongs to: the
// API origin, the bot and its owner (not the token, which may rotate).
func (c Credentials) Fingerprint() string {
	h := sha256.Sum256([]byte("clawbot-identity-v1\x00" + origin(c.BaseURL) + "\x00" + c.BotID + "\x00" + c.UserID))
	return hex.EncodeToString(h[:16])
}

// credFile is the credentials file's JSON.
type credFile struct {
	BotToken string `json:"bot_token"`
	BotID    string `json:"ilink_bot_id"`
	UserID   string `json:"ilink_user_id"`
	BaseURL  string `json:"baseurl"`
}

// Settings are an account's saved settings.
type Settings struct {
	Enabled bool
	// Workspace is the absolute directory of the account's sessions; ""
	// is the daemon's own workspace.
	Workspace   string
	RemoteTools string
}

// DefaultSettings apply to an account without a settings file.
func DefaultSettings() Settings { return Settings{Enabled: true, RemoteTools: RemoteToolsNone} }

type settingsFile struct {
	Enabled     *bool  `json:"enabled"`
	Workspace   string `json:"workspace,omitempty"`
	RemoteTools string `json:"remote_tools,omitempty"`
}

// Check validates settings.
func (s Settings) Check() error {
	switch s.RemoteTools {
	case RemoteToolsNone, RemoteToolsOwner:
	default:
		return fmt.Errorf("remote_tools %q must be %q or %q", s.RemoteTools, RemoteToolsNone, RemoteToolsOwner)
	}
	if s.Workspace != "" && !filepath.IsAbs(s.Workspace) {
		return fmt.Errorf("workspace %q must be an absolute path", s.Workspace)
	}
	return nil
}

// Files are an instance home's bridge files.
type Files struct{ Layout paths.Layout }

func (f Files) credPath(account string) string {
	return filepath.Join(f.Layout.ClawbotAccounts(), account+".json")
}

func (f Files) settingsPath(account string) string {
	return filepath.Join(f.Layout.ClawbotSettings(), account+".json")
}

// readStrict reads a bounded JSON file into v, refusing unknown keys and
// anything after the object.
func readStrict(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxFile {
		return fmt.Errorf("%s is larger than %d bytes", path, maxFile)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value", path)
	}
	return nil
}

// Credentials loads an account's credentials; a missing file is an error
// matching fs.ErrNotExist.
func (f Files) Credentials(account string) (Credentials, error) {
	if err := CheckAccount(account); err != nil {
		return Credentials{}, err
	}
	var cf credFile
	if err := readStrict(f.credPath(account), &cf); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Credentials{}, fmt.Errorf("account %q is not logged in (run `scv clawbot login --account %s`): %w", account, account, fs.ErrNotExist)
		}
		return Credentials{}, err
	}
	c := Credentials{Token: Token(cf.BotToken), BotID: cf.BotID, UserID: cf.UserID}
	if c.Token == "" || c.BotID == "" {
		return Credentials{}, fmt.Errorf("%s: bot_token and ilink_bot_id must not be empty; log in again", f.credPath(account))
	}
	base, err := CheckBaseURL(cf.BaseURL)
	if err != nil {
		return Credentials{}, fmt.Errorf("%s: %v", f.credPath(account), err)
	}
	c.BaseURL = base
	return c, nil
}

// SaveCredentials writes an account's credentials (atomically, 0600).
func (f Files) SaveCredentials(account string, c Credentials) error {
	if err := CheckAccount(account); err != nil {
		return err
	}
	b, err := json.MarshalIndent(credFile{BotToken: c.Token.Reveal(), BotID: c.BotID, UserID: c.UserID, BaseURL: c.BaseURL}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(f.credPath(account), append(b, '\n'))
}

// Settings loads an account's settings; a missing file gives
// DefaultSettings.
func (f Files) Settings(account string) (Settings, error) {
	if err := CheckAccount(account); err != nil {
		return Settings{}, err
	}
	var sf settingsFile
	err := readStrict(f.settingsPath(account), &sf)
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultSettings(), nil
	}
	if err != nil {
		return Settings{}, err
	}
	s := DefaultSettings()
	if sf.Enabled != nil {
		s.Enabled = *sf.Enabled
	}
	s.Workspace = sf.Workspace
	if sf.RemoteTools != "" {
		s.RemoteTools = sf.RemoteTools
	}
	if err := s.Check(); err != nil {
		return Settings{}, fmt.Errorf("%s: %v", f.settingsPath(account), err)
	}
	return s, nil
}

// SaveSettings writes an account's settings (atomically, 0600).
func (f Files) SaveSettings(account string, s Settings) error {
	if err := CheckAccount(account); err != nil {
		return err
	}
	if err := s.Check(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(settingsFile{Enabled: &s.Enabled, Workspace: s.Workspace, RemoteTools: s.RemoteTools}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(f.settingsPath(account), append(b, '\n'))
}

// Delete removes an account's credentials and settings files.
func (f Files) Delete(account string) error {
	if err := CheckAccount(account); err != nil {
		return err
	}
	for _, p := range []string{f.credPath(account), f.settingsPath(account)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", p, err)
		}
	}
	return nil
}

// Accounts lists the accounts that have credentials or settings, sorted.
// Files whose names are not account names are skipped.
func (f Files) Accounts() ([]string, error) {
	var names []string
	for _, dir := range []string{f.Layout.ClawbotAccounts(), f.Layout.ClawbotSettings()} {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".json")
			if ok && e.Type().IsRegular() && CheckAccount(name) == nil {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory: written 0600, synced, renamed over path, and the directory
// synced, so a crash leaves the old file or the new one. The directory
// and its parent (the bridge's own) are created 0700.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", d, err)
		}
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(d, 0o700); err != nil {
				return fmt.Errorf("restrict %s to its owner: %w", d, err)
			}
		}
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path + ".tmp-" + hex.EncodeToString(suffix[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
