package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Setting is one effective key for `scv config show`.
type Setting struct {
	Key    string
	Value  string // TOML-like; secrets are "<redacted>"
	Origin string
}

// Explain lists every effective setting with its origin. Secrets (inline
// keys, header values) print as "<redacted>"; keys read from the
// environment never appear, only the variable names. Agent overrides that
// are unset (the adapter's default applies) are left out.
func (l *Loaded) Explain() []Setting {
	var out []Setting
	walkLeaves(reflect.ValueOf(l.Config), nil, nil, func(path []string, pattern string, v reflect.Value) {
		key := joinKey(path)
		org := l.Origin(key)
		if v.Type() == headersType {
			names := make([]string, 0, v.Len())
			for _, k := range v.MapKeys() {
				names = append(names, k.String())
			}
			slices.Sort(names)
			if len(names) == 0 {
				out = append(out, Setting{Key: key, Value: "{}", Origin: org})
			}
			for _, n := range names {
				out = append(out, Setting{Key: joinKey(append(slices.Clone(path), n)), Value: Redacted, Origin: org})
			}
			return
		}
		if strings.HasPrefix(pattern, "agents.") && v.IsZero() {
			return
		}
		out = append(out, Setting{Key: key, Value: formatValue(v), Origin: org})
	})
	return out
}

// formatValue renders a leaf as TOML, redacting secrets.
func formatValue(v reflect.Value) string {
	if v.Type() == secretType {
		if v.String() == "" {
			return `""`
		}
		return Redacted
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Pointer:
		return formatValue(v.Elem())
	case reflect.Slice:
		if hs, ok := v.Interface().([]HookRun); ok {
			return formatHooks(hs)
		}
		if rs, ok := v.Interface().([]ApprovalRule); ok {
			return formatRules(rs)
		}
		q := quoteAll(v.Interface().([]string))
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// CommentedTemplate is the user config `scv config init` writes: every key
// with its default, commented out. Lines starting "## " explain; lines
// starting "# " are settings that take effect when uncommented.
func CommentedTemplate() string {
	var b strings.Builder
	b.WriteString(templateHead)
	section := ""
	walkLeaves(reflect.ValueOf(Defaults("")), nil, nil, func(path []string, pattern string, v reflect.Value) {
		table := joinKey(path[:len(path)-1])
		if strings.HasPrefix(pattern, "agents.") {
			if table != section {
				section = table
				writeAgentTable(&b, table)
			}
			return
		}
		if table != section {
			section = table
			fmt.Fprintf(&b, "\n# [%s]\n", table)
		}
		spec := specs[pattern]
		fmt.Fprintf(&b, "## %s\n", spec.doc)
		switch {
		case spec.example != "":
			fmt.Fprintf(&b, "## %s\n", spec.example)
		case pattern == "agent.system_prompt":
			b.WriteString("# system_prompt = '''\n")
			lines := strings.Split(DefaultSystemPrompt, "\n")
			for _, line := range lines[:len(lines)-1] {
				b.WriteString("# " + line + "\n")
			}
			b.WriteString("# " + lines[len(lines)-1] + "'''\n")
		case v.Type() == headersType:
			b.WriteString("# headers = {}\n")
		default:
			fmt.Fprintf(&b, "# %s = %s\n", path[len(path)-1], formatValue(v))
		}
	})
	mcpTemplate(&b)
	b.WriteString("\n## Models the catalogue does not know (a local or self-hosted one), or knows otherwise:\n")
	b.WriteString("## one [providers.<name>.models.<id>] table each (a quoted id when it has a ':' or '.'). For example:\n")
	for _, k := range []string{"context_window", "input_price", "output_price", "cache_read_price", "cache_write_price"} {
		s := specs["providers.*.models.*."+k]
		fmt.Fprintf(&b, "## %s  -- %s\n", s.example, s.doc)
	}
	return b.String()
}

func writeAgentTable(b *strings.Builder, table string) {
	if table == "agents.claude" {
		b.WriteString("\n## Delegated agent CLIs: [agents.claude], [agents.codex], [agents.grok], [agents.dsh], [agents.pi].\n")
		b.WriteString("## Unset keys keep the adapter's built-in command line (see docs/configuration.md).\n")
		for _, k := range []string{"command", "args", "prompt_args", "model_args", "effort_args"} {
			s := specs["agents.*."+k]
			fmt.Fprintf(b, "## %s  -- %s\n", s.example, s.doc)
		}
	}
	fmt.Fprintf(b, "\n# [%s]\n## %s\n# permissions = \"default\"\n", table, specs["agents.*.permissions"].doc)
	fmt.Fprintf(b, "## %s\n# transport = \"print\"\n", specs["agents.*.transport"].doc)
}

const templateHead = `## SCV user configuration ($SCV_HOME/config.toml), written by ` + "`scv config init`" + `.
## Every setting below is commented out and shows its built-in default; uncomment a
## line (remove "# ") to change it. Lines starting "## " are explanations.
## Layers, lowest first: defaults, this file, <workspace>/.scv/config.toml (untrusted:
## may only tighten), the --config / SCV_CONFIG file, env (SCV_PROVIDER, SCV_MODEL,
## SCV_BASE_URL, SCV_API_KEY_ENV), flags (--provider, --model, --base-url, --approval-policy).
## ` + "`scv config show`" + ` prints every effective setting and where it came from.
## Keep API keys in environment variables (api_key_env); an inline api_key needs mode 0600.
`
