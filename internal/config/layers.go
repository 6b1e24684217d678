package config

import (
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// inlineSecret says the key pattern holds a credential inline.
func inlineSecret(pattern string) bool {
	return pattern == "providers.*.api_key" || pattern == "web.brave_api_key"
}

// apply layers one parsed file over the configuration so far.
func (l *Loaded) apply(path, layer string, mode fs.FileMode, entries []entry, fresh reflect.Value) []Problem {
	root := reflect.ValueOf(&l.Config).Elem()
	var probs []Problem
	bad := func(e entry, key, msg string) {
		probs = append(probs, Problem{Source: path, Line: e.line, Key: key, Msg: msg})
	}
	seen := map[string]bool{}
	for _, e := range entries {
		key := joinKey(e.r.path)
		if seen[key] {
			continue
		}
		seen[key] = true
		if layer == LayerProject {
			if msg := l.projectRefusal(e, key, root, fresh, entries); msg != "" {
				bad(e, key, msg)
				continue
			}
		}
		if !e.r.leaf {
			// A project never creates a named table: what it may touch
			// exists in the lower layers already.
			if layer != LayerProject {
				set(root, e.r.path, reflect.Value{})
			}
			continue
		}
		if e.r.pattern == "approvals.rules" {
			// Rules add up across layers; a workspace's may only deny.
			nv, rp := layerRules(get(root, e.r.path), get(fresh, e.r.path), path, layer, arrayLines(entries, key))
			set(root, e.r.path, nv)
			l.origins[key] = origin{layer: layer, file: path, line: e.line}
			probs = append(probs, rp...)
			continue
		}
		if e.r.pattern == "hooks.run" {
			// Hooks add up across layers (a workspace's come after the
			// user's, when allowed).
			nv := layerHooks(get(root, e.r.path), get(fresh, e.r.path), path)
			set(root, e.r.path, nv)
			l.origins[key] = origin{layer: layer, file: path, line: e.line}
			if msg := validateLeaf(e.r.pattern, nv); msg != "" {
				bad(e, key, msg)
			}
			continue
		}
		if inlineSecret(e.r.pattern) && layer != LayerUser {
			bad(e, key, "an inline key is allowed only in the user config ($SCV_HOME/config.toml, mode 0600); name the environment variable that holds it with "+
				e.r.path[len(e.r.path)-1]+"_env instead")
			continue
		}
		nv := get(fresh, e.r.path)
		if a, ok := l.deprecatedAlias(e.r.pattern, nv, Problem{Source: path, Line: e.line, Key: key}); ok {
			nv = a
		}
		set(root, e.r.path, nv)
		l.origins[key] = origin{layer: layer, file: path, line: e.line}
		if msg := validateLeaf(e.r.pattern, nv); msg != "" {
			bad(e, key, msg)
		}
		if inlineSecret(e.r.pattern) && nv.String() != "" && mode&0o077 != 0 {
			bad(e, key, fmt.Sprintf("the user config %s has mode %04o, readable by group or others, and holds an inline key; the key is not used. Run chmod 600 %s, or move the key into the environment variable named by %s_env",
				path, mode, path, e.r.path[len(e.r.path)-1]))
		}
	}
	return probs
}

// arrayLines are the lines of the [[key]] headers of a file, in order.
func arrayLines(entries []entry, key string) []int {
	var lines []int
	for _, e := range entries {
		if e.array && joinKey(e.r.path) == key {
			lines = append(lines, e.line)
		}
	}
	return lines
}

// projectRefusal says why a project config may not set this entry.
func (l *Loaded) projectRefusal(e entry, key string, root, fresh reflect.Value, entries []entry) string {
	// Report the keys below a refused table rather than the table too.
	keysBelow := func() bool {
		for _, o := range entries {
			if len(o.r.path) > len(e.r.path) && slices.Equal(o.r.path[:len(e.r.path)], e.r.path) {
				return true
			}
		}
		return false
	}
	if msg := mcpRefusal(e.r.path, root); msg != "" && (e.r.leaf || !keysBelow()) {
		return msg
	}
	if e.r.pattern == "hooks.run" {
		return l.hooksRefusal(e.r.pattern)
	}
	if e.r.pattern == "approvals.rules" {
		return "" // deny rules only: layerRules checks each
	}
	if !e.r.leaf {
		switch e.r.path[0] {
		case "provider", "providers", "agents", "clawbot":
		default:
			return ""
		}
		if keysBelow() {
			return ""
		}
		return projectCheck("", reflect.Value{}, reflect.Value{})
	}
	return projectCheck(e.r.pattern, get(root, e.r.path), get(fresh, e.r.path))
}

// applyOverrides applies the env layer, then the flag layer. The active
// profile is settled first (flag --provider, else SCV_PROVIDER, else the
// files), so SCV_MODEL, SCV_BASE_URL and SCV_API_KEY_ENV always change the
// profile that is actually used.
func (l *Loaded) applyOverrides(opts Options) error {
	root := reflect.ValueOf(&l.Config).Elem()
	var probs []Problem
	setKey := func(parts []string, o origin, val string) {
		key := joinKey(parts)
		r, _ := resolve(parts)
		nv := reflect.ValueOf(val)
		if a, ok := l.deprecatedAlias(r.pattern, nv, Problem{Source: o.String(), Key: key}); ok {
			nv = a
		}
		set(root, parts, nv)
		l.origins[key] = o
		if msg := validateLeaf(r.pattern, get(root, parts)); msg != "" {
			probs = append(probs, Problem{Source: o.String(), Key: key, Msg: msg})
		}
	}
	if v := opts.Flags.Provider; v != "" {
		setKey([]string{"provider", "active"}, origin{layer: LayerFlag, name: "--provider"}, v)
	} else if v := opts.Env["SCV_PROVIDER"]; v != "" {
		setKey([]string{"provider", "active"}, origin{layer: LayerEnv, name: "SCV_PROVIDER"}, v)
	}
	active := l.Config.Provider.Active
	if _, ok := l.Config.Providers[active]; !ok {
		src, line := l.where("provider.active")
		return &Error{Problems: []Problem{{Source: src, Line: line, Key: "provider.active", Msg: l.noProfileMsg(active)}}}
	}
	fields := []struct{ env, flag, field, flagVal string }{
		{"SCV_MODEL", "--model", "model", opts.Flags.Model},
		{"SCV_BASE_URL", "--base-url", "base_url", opts.Flags.BaseURL},
		{"SCV_API_KEY_ENV", "", "api_key_env", ""},
	}
	for _, f := range fields {
		parts := []string{"providers", active, f.field}
		if v := opts.Env[f.env]; v != "" {
			setKey(parts, origin{layer: LayerEnv, name: f.env}, v)
		}
		if f.flagVal != "" {
			setKey(parts, origin{layer: LayerFlag, name: f.flag}, f.flagVal)
		}
	}
	if v := opts.Flags.ApprovalPolicy; v != "" {
		setKey([]string{"tools", "approval_policy"}, origin{layer: LayerFlag, name: "--approval-policy"}, v)
	}
	if len(probs) > 0 {
		return &Error{Problems: probs}
	}
	return nil
}

func (l *Loaded) noProfileMsg(name string) string {
	var names []string
	for n := range l.Config.Providers {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return fmt.Sprintf("no provider profile %q; defined profiles: %s (add a [providers.%s] table to the user config)",
		name, strings.Join(names, ", "), joinKey([]string{name}))
}

// crossField checks the rules that relate keys; each problem names the
// key and where its value came from.
func (l *Loaded) crossField(env map[string]string) []Problem {
	c := &l.Config
	var probs []Problem
	fail := func(key, msg string) {
		src, line := l.where(key)
		probs = append(probs, Problem{Source: src, Line: line, Key: key, Msg: msg})
	}
	le := func(a string, av int, b string, bv int) {
		if av > bv {
			fail(a, fmt.Sprintf("%d must not exceed %s = %d (%s)", av, b, bv, l.Origin(b)))
		}
	}
	if _, ok := c.Providers[c.Provider.Active]; !ok {
		fail("provider.active", l.noProfileMsg(c.Provider.Active))
	}
	le("tools.command_timeout_seconds", c.Tools.CommandTimeoutSeconds, "tools.max_timeout_seconds", c.Tools.MaxTimeoutSeconds)
	le("tools.agent_timeout_seconds", c.Tools.AgentTimeoutSeconds, "tools.max_timeout_seconds", c.Tools.MaxTimeoutSeconds)
	if cx := c.Context; cx.ReserveOutputTokens+cx.SafetyMarginTokens >= cx.MaxTokens {
		fail("context.reserve_output_tokens", fmt.Sprintf("%d plus context.safety_margin_tokens = %d (%s) must be less than context.max_tokens = %d (%s)",
			cx.ReserveOutputTokens, cx.SafetyMarginTokens, l.Origin("context.safety_margin_tokens"), cx.MaxTokens, l.Origin("context.max_tokens")))
	}
	le("protocol.max_client_frame_bytes", c.Protocol.MaxClientFrameBytes, "protocol.max_server_frame_bytes", c.Protocol.MaxServerFrameBytes)
	if c.Session.MaxPromptBytes > MaxPromptBytesLimit {
		fail("session.max_prompt_bytes", fmt.Sprintf("%d is above the largest allowed prompt limit, %d", c.Session.MaxPromptBytes, MaxPromptBytesLimit))
	}
	le("tools.output_limit_bytes", c.Tools.OutputLimitBytes, "protocol.max_server_frame_bytes", c.Protocol.MaxServerFrameBytes)
	pl := c.ProviderLimits
	le("provider_limits.max_sse_event_bytes", pl.MaxSSEEventBytes, "provider_limits.max_response_bytes", pl.MaxResponseBytes)
	le("provider_limits.max_assistant_bytes", pl.MaxAssistantBytes, "provider_limits.max_response_bytes", pl.MaxResponseBytes)
	le("provider_limits.max_tool_arguments_bytes", pl.MaxToolArgumentsBytes, "provider_limits.max_response_bytes", pl.MaxResponseBytes)
	l.mcpProblems(fail)
	l.transportProblems(fail)
	switch c.Web.Search {
	case SearchSearXNG:
		if c.Web.SearXNGURL == "" {
			fail("web.search", `"searxng" needs web.searxng_url, the base URL of your SearXNG instance`)
		}
	case SearchBrave:
		if _, err := c.BraveAPIKey(env); err != nil {
			fail("web.search", err.Error())
		}
	case SearchProvider:
		if name, p := c.ActiveProvider(); p.WireAPI != WireResponses && p.WireAPI != WireAnthropic {
			fail("web.search", fmt.Sprintf(`"provider" needs the active profile's wire_api = "responses" or "anthropic", but providers.%s.wire_api = %q (%s)`,
				joinKey([]string{name}), p.WireAPI, l.Origin(joinKey([]string{"providers", name, "wire_api"}))))
		}
	}
	if name, p := c.ActiveProvider(); p.WireAPI == WireAnthropic && p.BaseURL == defaultProvider().BaseURL {
		key := joinKey([]string{"providers", name, "base_url"})
		fail(key, fmt.Sprintf(`%q is OpenAI's endpoint but providers.%s.wire_api = "anthropic" (%s): set base_url = "https://api.anthropic.com" or your gateway's URL`,
			p.BaseURL, joinKey([]string{name}), l.Origin(joinKey([]string{"providers", name, "wire_api"}))))
	}
	return probs
}

// ACPAgents are the agents with an ACP adapter (transport = "acp"); the
// adapters' table in internal/tools/agents names the same ones.
var ACPAgents = []string{"claude", "codex", "pi"}

// transportProblems: transport = "acp" needs an agent with an ACP adapter,
// and replaces permissions = "full" (every step goes to SCV's approvals).
func (l *Loaded) transportProblems(fail func(key, msg string)) {
	for _, name := range KnownAgents {
		o, ok := l.Config.Agents[name]
		if !ok || o.Transport != TransportACP {
			continue
		}
		key := joinKey([]string{"agents", name, "transport"})
		if !slices.Contains(ACPAgents, name) {
			fail(key, fmt.Sprintf(`%s has no ACP adapter SCV knows (those of %s do): use "print"`, name, strings.Join(ACPAgents, ", ")))
		} else if o.Permissions == PermissionsFull {
			fail(key, fmt.Sprintf(`"acp" sends every step the agent asks permission for to SCV's approvals, which permissions = "full" (%s) would bypass: remove one of them`,
				l.Origin(joinKey([]string{"agents", name, "permissions"}))))
		}
	}
}

// deprecatedAlias replaces a deprecated name of an approval policy by the
// name it stands for and notes it (Loaded.Deprecated), so everything after
// loading sees the new names only.
func (l *Loaded) deprecatedAlias(pattern string, v reflect.Value, where Problem) (reflect.Value, bool) {
	if pattern != "tools.approval_policy" {
		return v, false
	}
	a, ok := PolicyAlias(v.String())
	if !ok {
		return v, false
	}
	where.Msg = fmt.Sprintf("%q is the deprecated name of %q (same meaning); write %q", v.String(), a, a)
	l.Deprecated = append(l.Deprecated, where)
	return reflect.ValueOf(a), true
}
