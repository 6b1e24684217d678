package agents

// Descriptor is everything SCV knows about running one agent CLI. Adding an
// agent is one more entry in descriptors, its sign-in in internal/signin's
// For and its name in config.KnownAgents (tests keep the three lists equal).
type Descriptor struct {
	// Name is the agent name; the tool is agent_<Name>.
	Name string
	// Title is the product name shown to users and the model.
	Title string
	// Command is the default executable name.
	Command string
	// ExtraBinDirs are per-user install directories (relative to the user's
	// home) searched after ~/.local/bin and before PATH.
	ExtraBinDirs []string
	// Args are the fixed arguments; `args` in config replaces them.
	Args []string
	// FullArgs are the full-permission switches, placed after Args.
	FullArgs []string
	// FullEnv are the full-permission environment settings.
	FullEnv []string
	// OutputArgs select the output format; they follow FullArgs. Hole:
	// {output_file} (Codex's -o file).
	OutputArgs []string
	// NewSessionArgs follow OutputArgs on a call that starts a
	// conversation; {session_id} is a fresh UUID SCV chose (Claude Code's
	// --session-id).
	NewSessionArgs []string
	// ResumeArgs replace NewSessionArgs on a call that continues a
	// conversation; ResumeCommand comes after every option, right before
	// PromptArgs (Codex's `resume <id>` subcommand). {session_id} is the
	// id the CLI reported. An agent with neither cannot continue one.
	ResumeArgs, ResumeCommand []string
	// ModelArgs / EffortArgs are templates holding {model} / {effort}; empty
	// means the option is not offered.
	ModelArgs  []string
	EffortArgs []string
	// PromptArgs come right before the prompt (e.g. grok's -p).
	PromptArgs []string
	// ModelHint names the model family in the schema description.
	ModelHint string
	// StateVar is the agent's own state variable and its path relative to
	// the private home ("" means the home itself).
	StateVar, StateDir string
	// ExtraEnv is always set (after the scrub).
	ExtraEnv []string
	// Scrub lists variables (exact names, or prefixes ending in "*") this
	// agent must not inherit, beyond the common list.
	Scrub []string
	// Format is the stdout format.
	Format Format
	// ACPCommand is the executable of the agent's ACP adapter, run with
	// transport = "acp" ("" when the agent has none).
	ACPCommand string
}

// commonScrub is removed from every agent's environment: SCV's selector
// variables and every known agent's credential, endpoint and state
// variables, so no agent uses another's sign-in from outside its home.
// Variables ending in _API_KEY are removed too (see scrubEnv).
var commonScrub = []string{
	"SCV_MODEL", "SCV_BASE_URL", "SCV_PROVIDER", "SCV_API_KEY_ENV", "SCV_CONFIG", "SCV_HOME",
	"SCV_APPROVAL_POLICY",
	"ANTHROPIC_*", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX",
	"OPENAI_*", "CODEX_*", "AZURE_OPENAI_*",
	"GROK_*", "XAI_*",
	"DSH_*", "DEEPSEEK_*",
	"PI_*",
	"GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_*",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
	"SCV_PARENT", "SCV_DELEGATION_DEPTH",
}

var descriptors = []Descriptor{
	{
		Name: "claude", Title: "Claude Code", Command: "claude",
		Args:       []string{"-p"},
		FullArgs:   []string{"--permission-mode", "bypassPermissions"},
		FullEnv:    []string{"IS_SANDBOX=1"},
		OutputArgs: []string{"--output-format", "stream-json", "--verbose"},
		// Claude Code takes the id SCV chose for a new session, and
		// --resume with it later (--session-id and --resume together
		// would need --fork-session).
		NewSessionArgs: []string{"--session-id", "{session_id}"},
		ResumeArgs:     []string{"--resume", "{session_id}"},
		ModelArgs:      []string{"--model", "{model}"},
		EffortArgs:     []string{"--effort", "{effort}"},
		ModelHint:      "a Claude model alias such as sonnet, opus or haiku, or a full Claude model ID",
		Format:         FormatClaude,
		ACPCommand:     "claude-agent-acp",
	},
	{
		Name: "codex", Title: "Codex", Command: "codex",
		Args:       []string{"exec"},
		FullArgs:   []string{"--dangerously-bypass-approvals-and-sandbox", "-c", `web_search="live"`},
		OutputArgs: []string{"--json", "-o", "{output_file}"},
		// `codex exec [options] resume <thread id> <prompt>`: exec's
		// options before the subcommand, the thread id from
		// thread.started.
		ResumeCommand: []string{"resume", "{session_id}"},
		ModelArgs:     []string{"-m", "{model}"},
		EffortArgs:    []string{"-c", `model_reasoning_effort="{effort}"`},
		ModelHint:     "an OpenAI model ID such as gpt-5.1-codex",
		StateVar:      "CODEX_HOME", StateDir: "",
		Format:     FormatCodex,
		ACPCommand: "codex-acp",
	},
	{
		Name: "grok", Title: "Grok Build", Command: "grok",
		ExtraBinDirs: []string{".grok/bin"},
		FullArgs:     []string{"--always-approve"},
		ModelArgs:    []string{"-m", "{model}"},
		EffortArgs:   []string{"--reasoning-effort", "{effort}"},
		PromptArgs:   []string{"-p"},
		ModelHint:    "a Grok model ID such as grok-4",
		StateVar:     "GROK_HOME", StateDir: ".grok",
		ExtraEnv: []string{"GROK_DISABLE_AUTOUPDATER=1"},
		Format:   FormatText,
	},
	{
		Name: "dsh", Title: "DeepSeek Harness", Command: "dsh",
		Args:     []string{"--profile", "headless"},
		FullEnv:  []string{"DSH_PERMISSION_MODE=danger-full-access"},
		StateVar: "DSH_HOME", StateDir: ".dsh",
		Format: FormatText,
	},
	{
		Name: "pi", Title: "pi", Command: "pi",
		Args:       []string{"-p"},
		OutputArgs: []string{"--mode", "json"},
		// pi saves every session; --session loads the one whose id the
		// first `session` event reported (--session-id would create an
		// empty one silently if the id were unknown).
		ResumeArgs: []string{"--session", "{session_id}"},
		ModelArgs:  []string{"--model", "{model}"},
		EffortArgs: []string{"--thinking", "{effort}"},
		ModelHint:  "a pi model pattern or provider/id such as scv/gpt-5.1",
		StateVar:   "PI_CODING_AGENT_DIR", StateDir: ".pi/agent",
		Format:     FormatPi,
		ACPCommand: "pi-acp",
	},
}

// Resumes says the agent can continue a conversation.
func (d Descriptor) Resumes() bool { return len(d.ResumeArgs)+len(d.ResumeCommand) > 0 }

// Lookup returns the descriptor of name.
func Lookup(name string) (Descriptor, bool) {
	for _, d := range descriptors {
		if d.Name == name {
			return d, true
		}
	}
	return Descriptor{}, false
}

// Names lists the known agents in table order.
func Names() []string {
	out := make([]string, 0, len(descriptors))
	for _, d := range descriptors {
		out = append(out, d.Name)
	}
	return out
}
