package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Override is the user's [agents.<name>] configuration. A nil slice keeps
// the default; a non-nil empty slice clears it (for model_args/effort_args:
// the option is not offered).
type Override struct {
	Command    string
	Args       []string
	PromptArgs []string
	ModelArgs  []string
	EffortArgs []string
	// Permissions is "default" (or empty) or "full".
	Permissions string
	// Transport is "print" (or empty: the command line of Args) or "acp"
	// (the agent's ACP adapter, ACPCommand).
	Transport string
}

// Adapter is a descriptor with the user's override applied.
type Adapter struct {
	Descriptor
	// Full says permissions = "full".
	Full bool
	// ACP says transport = "acp": Command is the ACP adapter, Args its
	// arguments, and a run is an ACP prompt turn (acp.go).
	ACP bool
}

// Apply merges an override into the descriptor.
func Apply(d Descriptor, o Override) (Adapter, error) {
	a := Adapter{Descriptor: d}
	if o.Command != "" {
		a.Command = o.Command
	}
	if o.Args != nil {
		a.Args = slices.Clone(o.Args)
	}
	if o.PromptArgs != nil {
		a.PromptArgs = slices.Clone(o.PromptArgs)
	}
	if o.ModelArgs != nil {
		a.ModelArgs = slices.Clone(o.ModelArgs)
	}
	if o.EffortArgs != nil {
		a.EffortArgs = slices.Clone(o.EffortArgs)
	}
	switch o.Permissions {
	case "", "default":
	case "full":
		a.Full = true
	default:
		return Adapter{}, fmt.Errorf("agents.%s.permissions: %q is not \"default\" or \"full\"", d.Name, o.Permissions)
	}
	return applyTransport(a, o)
}

// ValidModel reports whether m is an acceptable model value: 1 to 128 of
// [A-Za-z0-9._:/@[]-], not starting with '-' or '@'.
func ValidModel(m string) bool {
	if m == "" || len(m) > 128 || m[0] == '-' || m[0] == '@' {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:/@[]-", c) >= 0) {
			return false
		}
	}
	return true
}

// Efforts are the accepted effort values.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// Selection is the per-call choice of model and effort ("" = omitted).
type Selection struct {
	Model, Effort string
	// SessionID fills {session_id} of a new conversation, OutputFile
	// {output_file}.
	SessionID, OutputFile string
	// Resume, when set, is the CLI's own id of the conversation this call
	// continues.
	Resume string
}

// Argv builds argv[1:]: fixed args, full-permission switches, output
// arguments, the new-session or resume arguments, model, effort, the resume
// subcommand, prompt_args, prompt. Every substituted value is exactly one
// element.
func (a Adapter) Argv(sel Selection, prompt string) ([]string, error) {
	if strings.HasPrefix(prompt, "-") {
		return nil, errors.New("the prompt cannot start with '-'")
	}
	if sel.Model != "" && !ValidModel(sel.Model) {
		return nil, fmt.Errorf("invalid model %q: use 1-128 ASCII letters, digits or ._:/@[]- not starting with - or @", sel.Model)
	}
	if sel.Effort != "" && !slices.Contains(Efforts, sel.Effort) {
		return nil, fmt.Errorf("invalid effort %q: use one of %s", sel.Effort, strings.Join(Efforts, ", "))
	}
	if sel.Model != "" && len(a.ModelArgs) == 0 {
		return nil, fmt.Errorf("agent_%s takes no model", a.Name)
	}
	if sel.Effort != "" && len(a.EffortArgs) == 0 {
		return nil, fmt.Errorf("agent_%s takes no effort", a.Name)
	}
	out := slices.Clone(a.Args)
	if a.Full {
		out = append(out, a.FullArgs...)
	}
	if sel.Resume != "" && !a.Resumes() {
		return nil, fmt.Errorf("agent_%s cannot continue a conversation", a.Name)
	}
	for _, s := range a.OutputArgs {
		out = append(out, strings.ReplaceAll(s, "{output_file}", sel.OutputFile))
	}
	if sel.Resume != "" {
		out = appendTemplate(out, a.ResumeArgs, "{session_id}", sel.Resume)
	} else {
		out = appendTemplate(out, a.NewSessionArgs, "{session_id}", sel.SessionID)
	}
	if sel.Model != "" {
		out = appendTemplate(out, a.ModelArgs, "{model}", sel.Model)
	}
	if sel.Effort != "" {
		out = appendTemplate(out, a.EffortArgs, "{effort}", sel.Effort)
	}
	if sel.Resume != "" {
		out = appendTemplate(out, a.ResumeCommand, "{session_id}", sel.Resume)
	}
	out = append(out, a.PromptArgs...)
	return append(out, prompt), nil
}

func appendTemplate(out, tmpl []string, hole, value string) []string {
	for _, s := range tmpl {
		out = append(out, strings.ReplaceAll(s, hole, value))
	}
	return out
}

// Resolve finds the adapter's executable: an absolute or relative path is
// used as is (made absolute); a bare name is looked up in ~/.local/bin, the
// descriptor's extra per-user directories, then each PATH entry.
func (a Adapter) Resolve(userHome, pathEnv string) (string, error) {
	cmd := a.Command
	if strings.Contains(cmd, "/") {
		abs, err := filepath.Abs(cmd)
		if err != nil {
			return "", err
		}
		if !isExecutable(abs) {
			return "", fmt.Errorf("%s is not an executable file", abs)
		}
		return abs, nil
	}
	var dirs []string
	if userHome != "" {
		dirs = append(dirs, filepath.Join(userHome, ".local", "bin"))
		for _, d := range a.ExtraBinDirs {
			dirs = append(dirs, filepath.Join(userHome, d))
		}
	}
	dirs = append(dirs, filepath.SplitList(pathEnv)...)
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, cmd)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in ~/.local/bin or PATH", cmd)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// EnvSpec is what a child environment is built from.
type EnvSpec struct {
	// Base is the server's environment (KEY=VALUE), scrubbed first.
	Base []string
	// AdapterHome is $SCV_HOME/adapters/<name>; SCVHome is $SCV_HOME.
	AdapterHome, SCVHome string
	// Parent is the full SCV_PARENT value; Depth the child's depth ("" and
	// 0 leave them unset, as for login commands).
	Parent string
	Depth  int
	// Remove names more variables to scrub: the ones holding the keys of
	// SCV's own provider profiles, whatever they are called (a profile's
	// api_key_env need not end in _API_KEY).
	Remove []string
}

// Env builds the child's complete environment: Base minus every *_API_KEY,
// SCV selector and agent credential/endpoint/state variable and every
// variable of Remove, then the
// private HOME, SCV_HOME, XDG directories, the agent's state variable, its
// fixed extra settings, full-permission settings and the delegation tags.
func (a Adapter) Env(s EnvSpec) []string {
	out := scrubEnv(s.Base, slices.Concat(commonScrub, a.Scrub, s.Remove))
	h := s.AdapterHome
	state := h
	if a.StateDir != "" {
		state = filepath.Join(h, a.StateDir)
	}
	out = append(out,
		"HOME="+h,
		"SCV_HOME="+s.SCVHome,
		"XDG_CONFIG_HOME="+filepath.Join(h, ".config"),
		"XDG_DATA_HOME="+filepath.Join(h, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(h, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(h, ".cache"),
	)
	if a.StateVar != "" {
		out = append(out, a.StateVar+"="+state)
	}
	out = append(out, a.ExtraEnv...)
	if a.Full {
		out = append(out, a.FullEnv...)
	}
	if s.Parent != "" {
		out = append(out, "SCV_PARENT="+s.Parent, "SCV_DELEGATION_DEPTH="+strconv.Itoa(s.Depth))
	}
	return out
}

// StateDirPath is the agent's own state directory inside its private home.
func (a Adapter) StateDirPath(adapterHome string) string {
	return filepath.Join(adapterHome, a.StateDir)
}

// scrubEnv drops HOME and every variable matching drop (exact, or prefix
// with a trailing "*") or ending in _API_KEY.
func scrubEnv(base, drop []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasSuffix(k, "_API_KEY") || matchAny(k, drop) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func matchAny(k string, pats []string) bool {
	for _, p := range pats {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(k, pre) {
				return true
			}
		} else if k == p {
			return true
		}
	}
	return false
}

// EnsureHome creates the private home (0700) and the agent's state directory.
func (a Adapter) EnsureHome(adapterHome string) error {
	for _, d := range []string{adapterHome, a.StateDirPath(adapterHome)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create agent home: %w", err)
		}
	}
	return os.Chmod(adapterHome, 0o700)
}
