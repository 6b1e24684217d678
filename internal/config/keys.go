package config

// projectRule says what an untrusted project config may do with a key. The
// zero value forbids it, so a key added without a rule is safe.
type projectRule int

const (
	projForbid      projectRule = iota
	projLower                   // an integer limit: equal or lower only
	projStricter                // tools.approval_policy: equal or stricter only
	projDisable                 // a switch: may turn it off, never on
	projSearch                  // web.search: may set "off" (or repeat the lower value)
	projAllow                   // skills.project_dir (checked to stay inside the workspace)
	projNarrow                  // mcp.servers.*.tools: a non-empty subset only
	projGrow                    // a list that only grows: may add entries, never drop one
	projSandboxMode             // sandbox.mode: equal or stricter only
	projSubset                  // a list that only shrinks: each entry must be in the lower list
)

// keySpec describes one key pattern.
type keySpec struct {
	doc   string
	min   int // least valid value of an integer key
	proj  projectRule
	check func(s string) string // extra check of a string key, or of each entry of a list; "" is fine
	// example marks keys with no useful default: the template shows them
	// as an explanation only.
	example string
}

func limit(doc string, least int) keySpec { return keySpec{doc: doc, min: least, proj: projLower} }

// specs covers every leaf pattern of Config (a test keeps it complete).
var specs = map[string]keySpec{
	"provider.active": {doc: "Name of the active provider profile (a [providers.<name>] table).", check: nonEmpty},

	"providers.*.wire_api":         {doc: `Wire protocol of the endpoint: "responses" (OpenAI Responses), "chat" (Chat Completions) or "anthropic" (Anthropic Messages).`, check: enum(WireResponses, WireChat, WireAnthropic)},
	"providers.*.base_url":         {doc: "Base URL of the endpoint (http or https); the anthropic wire posts to <base_url>/v1/messages.", check: httpURL},
	"providers.*.model":            {doc: "Model name sent to the endpoint.", check: nonEmpty},
	"providers.*.api_key_env":      {doc: `Environment variable holding the API key ("" for a keyless endpoint).`, check: envName},
	"providers.*.api_key":          {doc: "Inline API key: user config only, and the file must be mode 0600. Prefer api_key_env.", example: `api_key = "sk-..."`},
	"providers.*.headers":          {doc: "Extra HTTP headers sent to this endpoint (values are treated as secrets).", check: nil},
	"providers.*.timeout_seconds":  {doc: "Timeout of one model request, in seconds.", min: 1},
	"providers.*.max_retries":      {doc: "Retries before anything streamed, for 429/5xx and connection failures.", min: 0},
	"providers.*.reasoning_effort": {doc: "Reasoning effort sent to reasoning models (optional, e.g. low, medium, high); on the anthropic wire it turns on extended thinking (minimal, low, medium, high or xhigh).", check: effortWord, example: `reasoning_effort = "medium"`},

	"providers.*.models.*.context_window":    {doc: "Context window of this model of the profile, in tokens, where the model catalogue does not know it (or knows it otherwise); 0 keeps the catalogue's (docs/model.md).", example: `context_window = 32768`},
	"providers.*.models.*.input_price":       {doc: "Price of this model's prompt tokens, in US dollars per million; any price set replaces the catalogue's prices of the model.", example: `input_price = 0.5`},
	"providers.*.models.*.output_price":      {doc: "Price of this model's generated tokens, in US dollars per million.", example: `output_price = 1.5`},
	"providers.*.models.*.cache_read_price":  {doc: "Price of prompt tokens read from the provider's cache, in US dollars per million (0: the input price).", example: `cache_read_price = 0.05`},
	"providers.*.models.*.cache_write_price": {doc: "Price of prompt tokens written to the provider's cache, in US dollars per million (0: the input price).", example: `cache_write_price = 0.6`},

	"agent.max_steps":                 limit("Most model requests in one turn.", 1),
	"agent.system_prompt":             {doc: "System prompt of every session."},
	"agent.max_delegation_depth":      limit("Deepest delegation chain that still offers agent tools (0 disables delegation).", 0),
	"agent.max_conversations":         limit("Most conversations with delegated agents a session keeps; a new one closes the least recently used.", 1),
	"agent.conversation_idle_seconds": limit("Seconds a conversation with a delegated agent may stay unused before it closes.", 1),
	"agent.max_background":            limit("Most background jobs of delegated agents (agent_* with background: true) running at once in one session.", 1),
	"agent.report_turns":              {doc: `What a background job's end does in its session: "wait" adds its report to the history for the next prompt; "auto" also starts a turn for it when the session is open and idle. User config only.`, check: enum(ReportTurnsWait, ReportTurnsAuto)},

	"session.max_history_bytes": limit("Most bytes of history kept by a session.", 1),
	"session.max_messages":      limit("Most messages kept by a session.", 1),
	"session.max_queued_turns":  limit("Most turns a session holds waiting behind the running one; more are refused.", 0),
	"session.max_prompt_bytes":  limit("Largest prompt of one turn, in bytes; a longer one is refused with its size. At most 67108864; a prompt must also fit protocol.max_client_frame_bytes once JSON-encoded.", 1),

	"history.max_sessions": limit("Most sessions the session database keeps; the least recently used beyond it are deleted (at daemon start and by scv sessions prune).", 1),
	"history.max_age_days": limit("Days a session is kept after its last use; older ones are deleted (at daemon start and by scv sessions prune).", 1),

	"context.max_tokens":            limit("Context window of the model, in tokens, for models the catalogue and providers.*.models do not know; set here, it applies to every model (docs/model.md).", 1),
	"context.reserve_output_tokens": limit("Tokens kept free for the model's answer.", 1),
	"context.safety_margin_tokens":  limit("Extra tokens kept free because token counts are estimates.", 0),
	"context.bytes_per_token":       limit("Bytes per token used to estimate token counts.", 1),
	"context.summary_max_chars":     limit("Longest summary of compacted history, in characters.", 1),

	"tools.approval_policy":         {doc: `What happens to calls with side effects: "ask-unsandboxed" (run bash commands the sandbox confines without network unasked, ask before the rest), "ask-on-risk" (ask before each), "ask-always" (ask before every call, reads too) or "deny-on-risk" (deny them without asking; reads run). The old names "on-risk", "always" and "never" are deprecated aliases.`, proj: projStricter, check: policyCheck},
	"tools.command_timeout_seconds": limit("Default timeout of a bash command, in seconds.", 1),
	"tools.agent_timeout_seconds":   limit("Default timeout of a delegated agent run, in seconds.", 1),
	"tools.max_timeout_seconds":     limit("Largest timeout a tool call may ask for, in seconds.", 1),
	"tools.output_limit_bytes":      limit("Most bytes of tool output returned to the model.", 1),
	"tools.max_read_bytes":          limit("Most bytes the read tool returns per call.", 1),
	"tools.max_write_bytes":         limit("Largest content the write tool accepts.", 1),
	"tools.bash_env_remove": {doc: `Variables the bash tool's shell does not inherit: names, NAME* prefixes, and "@provider_keys" (every api_key_env and brave_api_key_env). [] keeps them all.`,
		proj: projGrow, check: envRemoveEntry},
	"tools.bash_login": {doc: "Run bash commands in a login shell (bash -lc, which reads /etc/profile and ~/.bash_profile or ~/.profile first); false runs bash -c, for a profile too slow to read before every command. User config only."},

	"protocol.max_client_frame_bytes":      limit("Largest protocol line a client may send.", 1),
	"protocol.max_server_frame_bytes":      limit("Largest protocol line the server sends.", 1),
	"protocol.max_sessions_per_connection": limit("Most sessions one client connection may have open; more are refused.", 1),
	"protocol.max_sessions":                limit("Most sessions the server (the daemon, or one stdio server) has open at once; more are refused.", 1),

	"provider_limits.max_sse_event_bytes":      limit("Largest server-sent event of a model stream.", 1),
	"provider_limits.max_response_bytes":       limit("Most content bytes (answer, reasoning, arguments) of one model response; the stream itself may be 64 times as large.", 1),
	"provider_limits.max_assistant_bytes":      limit("Most bytes of assistant text in one response.", 1),
	"provider_limits.max_tool_calls":           limit("Most tool calls in one response.", 1),
	"provider_limits.max_tool_arguments_bytes": limit("Largest arguments of one tool call.", 1),

	"skills.user_dir":        {doc: `User skills root, absolute or "~/..." (default: the instance skills/ directory).`, check: userDir, example: `user_dir = "~/.scv/skills"`},
	"skills.project_dir":     {doc: "Project skills root, relative to the workspace and inside it.", proj: projAllow, check: projectDir},
	"skills.scan_projects":   {doc: "List .agents/skills and .claude/skills of the workspace and its child projects.", proj: projDisable},
	"skills.max_skills":      limit("Most skills discovered.", 1),
	"skills.max_skill_bytes": limit("Largest SKILL.md read.", 1),

	"web.enabled":                 {doc: "Offer the web_fetch tool.", proj: projDisable},
	"web.fetch_max_bytes":         limit("Most bytes web_fetch downloads.", 1),
	"web.fetch_timeout_seconds":   limit("Timeout of one web_fetch, in seconds.", 1),
	"web.max_redirects":           limit("Most redirects web_fetch follows.", 0),
	"web.auto_approve_domains":    {doc: `HTTPS hosts fetched without approval: "host" or "*.host" (strict subdomains).`, check: domainEntry},
	"web.allow_private_addresses": {doc: "Let web_fetch reach loopback, private and link-local addresses."},
	"web.search":                  {doc: `Web search: "off", "provider" (hosted; responses and anthropic wires), "searxng" or "brave".`, proj: projSearch, check: enum(SearchOff, SearchProvider, SearchSearXNG, SearchBrave)},
	"web.searxng_url":             {doc: `Base URL of the SearXNG instance (for search = "searxng").`, check: optionalURL, example: `searxng_url = "http://127.0.0.1:8888"`},
	"web.brave_url":               {doc: "Brave Search API URL (empty: the public API).", check: optionalURL, example: `brave_url = "https://api.search.brave.com/res/v1/web/search"`},
	"web.brave_api_key":           {doc: "Inline Brave Search key: user config only, file mode 0600. Prefer brave_api_key_env.", example: `brave_api_key = "..."`},
	"web.brave_api_key_env":       {doc: "Environment variable holding the Brave Search key.", check: envName},
	"web.max_search_results":      limit("Most results one web_search returns.", 1),

	"agents.*.command":     {doc: "Executable of the agent CLI (default: the adapter's own).", check: nonEmpty, example: `command = "/opt/bin/claude"`},
	"agents.*.args":        {doc: "Fixed arguments replacing the adapter's defaults.", example: `args = ["-p"]`},
	"agents.*.prompt_args": {doc: "Arguments placed right before the prompt (for CLIs whose prompt is a flag value).", example: `prompt_args = ["-p"]`},
	"agents.*.model_args":  {doc: "Model selection template holding {model}; empty means no model option.", example: `model_args = ["--model", "{model}"]`},
	"agents.*.effort_args": {doc: "Effort selection template holding {effort}; empty means no effort option.", example: `effort_args = ["--effort", "{effort}"]`},
	"agents.*.permissions": {doc: `"default" adds nothing; "full" opts in to the CLI's own full-autonomy switches.`, check: enum(PermissionsDefault, PermissionsFull)},
	"agents.*.transport": {doc: `"print" runs the CLI's one-shot command line; "acp" runs its ACP adapter (claude-agent-acp, codex-acp, pi-acp) and relays the agent's permission requests to SCV's approvals.`,
		check: enum(TransportPrint, TransportACP), example: `transport = "acp"`},

	"hooks.allow_workspace": {doc: "Let a workspace's .scv/config.toml define hooks too (a hook runs a command); only the user config may turn it on."},
	"hooks.run": {doc: "Hooks: [[hooks.run]] tables with event, match (a tool-name glob), command (argv), timeout_seconds and on_error (docs/hooks.md).",
		example: `[[hooks.run]] event = "pre_tool", match = "bash", command = ["/usr/local/bin/check-bash"]`},
	"approvals.rules": {doc: `Saved approval rules: [[approvals.rules]] tables with tool, one of prefix (bash), path (write) or domain (web_fetch), decision ("allow" or "deny") and workspace (an absolute directory the rule is limited to). An allow rule covers what a session grant could, never a guarded path, a command with $(…) or an interpreter; deny beats allow; a workspace config may add deny rules only (docs/configuration.md).`,
		proj: projGrow, example: `[[approvals.rules]] tool = "bash", prefix = "go test", decision = "allow"`},
	"clawbot.base_url":             {doc: "iLink origin that `scv clawbot login` signs in at (https; http only for a loopback address). A project config may not set it.", check: httpURL},
	"clawbot.max_queue_per_sender": {doc: "Most messages of one WeChat conversation the bridge holds (the one being answered and those waiting); more get a busy reply.", min: 1},
	"clawbot.max_conversations":    {doc: "Most WeChat conversations a bridge keeps, each with its session; a new sender past it takes the place of the least recently used idle one, or gets a busy reply.", min: 1},
	"clawbot.max_queued_bytes":     {doc: "Most bytes of message text a bridge holds (waiting or being answered); a message past it gets a busy reply.", min: 1},
	"tui.notify":                   {doc: `How the TUI calls for attention when a turn ends or an approval waits while the terminal is unfocused (or after tui.notify_after_seconds): "bell", "osc9" (a desktop notification: iTerm2, WezTerm, kitty, Windows Terminal), "osc777" (rxvt, foot, VTE terminals) or "off".`, check: enum(NotifyBell, NotifyOSC9, NotifyOSC777, NotifyOff)},
	"tui.notify_after_seconds":     limit("Seconds after which a turn's end or a waiting approval calls for attention even in a focused terminal.", 1),
	"sandbox.mode": {doc: `OS sandbox of what the model runs (Linux Landlock + seccomp; docs/sandbox.md): "off" (the default: commands run with your rights, as before), "workspace-write" (read everywhere but deny_read, write only in the workspace, writable_roots and a temp dir per command) or "read-only" (no writes but the temp dir). A kernel that cannot enforce it all refuses to run commands unless best_effort = true; scv sandbox check shows what this machine enforces.`,
		proj: projSandboxMode, check: enum(SandboxOff, SandboxWorkspaceWrite, SandboxReadOnly)},
	"sandbox.network":        {doc: "Let sandboxed commands use the network; false (the default) refuses TCP connect and bind, UDP and every other socket family.", proj: projDisable},
	"sandbox.writable_roots": {doc: `Directories writable besides the workspace in workspace-write mode: absolute paths or "~/..." (never "/").`, proj: projSubset, check: writableRoot, example: `writable_roots = ["~/.cache/go-build"]`},
	"sandbox.deny_read":      {doc: `Paths a sandboxed command can neither read nor list: absolute paths, "~/..." or "@scv_home" (SCV's home: keys, sessions database).`, proj: projGrow, check: denyReadEntry},
	"sandbox.applies_to":     {doc: `What runs sandboxed: "bash" (commands), "mcp" (stdio MCP servers), "agents" (delegated agent CLIs, which usually need network = true).`, proj: projGrow, check: enum(SandboxBash, SandboxMCP, SandboxAgents)},
	"sandbox.best_effort":    {doc: "When the kernel cannot enforce every rule: true runs with the rules it can enforce (and says which are missing), false (the default) refuses to run.", proj: projDisable},

	"mcp.servers.*.command":                 {doc: "Executable of a stdio MCP server (a name is looked up in PATH).", check: nonEmpty, example: `command = "npx"`},
	"mcp.servers.*.args":                    {doc: "Arguments of the stdio server.", example: `args = ["-y", "@modelcontextprotocol/server-filesystem", "."]`},
	"mcp.servers.*.env":                     {doc: "Variables set in the stdio server's environment (values are treated as secrets).", example: `env = { LOG_LEVEL = "warn" }`},
	"mcp.servers.*.env_from":                {doc: "Variables copied from SCV's own environment into the stdio server's.", check: envName, example: `env_from = ["GITHUB_PERSONAL_ACCESS_TOKEN"]`},
	"mcp.servers.*.cwd":                     {doc: "Working directory of the stdio server, absolute (default: the session's workspace).", check: absPathOrEmpty, example: `cwd = "/srv/data"`},
	"mcp.servers.*.url":                     {doc: "Endpoint of a streamable HTTP MCP server (http or https).", check: optionalURL, example: `url = "http://127.0.0.1:8931/mcp"`},
	"mcp.servers.*.headers":                 {doc: "Extra HTTP headers sent to the HTTP server (values are treated as secrets).", example: `headers = { X-Team = "tools" }`},
	"mcp.servers.*.bearer_token_env":        {doc: "Environment variable whose value is sent as Authorization: Bearer to the HTTP server.", check: envName, example: `bearer_token_env = "MCP_TOKEN"`},
	"mcp.servers.*.enabled":                 {doc: "Start this server and offer its tools (a project config may turn it off).", proj: projDisable, example: `enabled = true`},
	"mcp.servers.*.tools":                   {doc: "Only these tools of the server (by the server's own names); empty offers all.", check: toolName, proj: projNarrow, example: `tools = ["read_file", "list_directory"]`},
	"mcp.servers.*.disabled_tools":          {doc: "Tools of the server never offered (by the server's own names).", check: toolName, proj: projGrow, example: `disabled_tools = ["write_file"]`},
	"mcp.servers.*.startup_timeout_seconds": {doc: "Time a server gets to start and list its tools, in seconds.", min: 1, example: `startup_timeout_seconds = 30`},
	"mcp.servers.*.tool_timeout_seconds":    {doc: "Timeout of one call of the server's tools, in seconds.", min: 1, example: `tool_timeout_seconds = 120`},
	"mcp.servers.*.risk":                    {doc: `Risk of every call of the server's tools: "process" (default), "network", "filesystem" or "read_only"; the server's own hints never lower it.`, check: enum(RiskProcess, RiskNetwork, RiskFilesystem, RiskReadOnly), example: `risk = "process"`},
	"mcp.servers.*.read_only_tools":         {doc: "Tools of the server whose calls are read_only whatever risk says (by the server's own names).", check: toolName, example: `read_only_tools = ["read_file"]`},
}

// KeyDoc is the explanation of a key pattern ("" for an unknown one), as
// the template and `scv config show` print it.
func KeyDoc(pattern string) string { return specs[pattern].doc }
