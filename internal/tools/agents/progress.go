package agents

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/redact"
)

// Live progress of a delegated run: what the agent is doing, read from its
// stream as it arrives, as short lines for the user (tool.progress). Only
// the steps a person wants to follow are told: a command it runs and how
// it ended, a file it edits or reads, a search or fetch, an MCP tool, and
// the first line of text it says on the way. Paths are cut to their last
// two components, URLs lose their query, and credential-looking values
// become "…" (internal/redact). The lines never reach the model: the sink
// is tool.Env.Progress.

// progressEvent turns one stream line into progress lines for p.progress.
// Cheap substring checks come first, as in handleLine.
func (p *parser) progressEvent(line []byte) {
	switch p.format {
	case FormatClaude:
		if bytes.Contains(line, []byte(`"assistant"`)) {
			p.claudeProgress(line)
		}
	case FormatCodex:
		if bytes.Contains(line, []byte(`"item.`)) && !bytes.Contains(line, []byte(`"agent_message"`)) {
			p.codexProgress(line)
		}
	case FormatPi:
		switch {
		case bytes.Contains(line, []byte(`"tool_execution_start"`)):
			p.piToolProgress(line)
		case bytes.Contains(line, []byte(`"message_end"`)) && bytes.Contains(line, []byte(`"assistant"`)):
			p.piTextProgress(line)
		}
	}
}

func (p *parser) say(s string) {
	if s = progressText(s); s != "" {
		p.progress(s)
	}
}

func (p *parser) claudeProgress(line []byte) {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "assistant" {
		return
	}
	for _, c := range ev.Message.Content {
		switch c.Type {
		case "tool_use":
			p.say(toolUseLine(c.Name, c.Input))
		case "text":
			p.say(firstLine(c.Text))
		}
	}
}

// toolUseLine describes a Claude Code or pi tool use by its name and input.
func toolUseLine(name string, input json.RawMessage) string {
	var in struct {
		Command     string `json:"command"`
		FilePath    string `json:"file_path"`
		Path        string `json:"path"`
		Notebook    string `json:"notebook_path"`
		URL         string `json:"url"`
		Query       string `json:"query"`
		Pattern     string `json:"pattern"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(input, &in)
	file := cmpOr(in.FilePath, in.Path, in.Notebook)
	switch strings.ToLower(name) {
	case "bash":
		return "Bash: " + shortCommand(in.Command)
	case "edit", "multiedit", "write", "read", "notebookedit", "ls":
		if file == "" {
			return toolTitle(name)
		}
		return toolTitle(name) + " " + shortPath(file)
	case "webfetch":
		return "WebFetch " + urlHost(in.URL)
	case "websearch":
		return "WebSearch " + in.Query
	case "grep", "glob", "find":
		s := toolTitle(name) + " " + in.Pattern
		if file != "" {
			s += " in " + shortPath(file)
		}
		return s
	case "task", "agent":
		return toolTitle(name) + " " + in.Description
	}
	return toolTitle(name)
}

// toolTitle capitalises pi's lower-case tool names as Claude Code spells
// its own (read → Read); Claude Code's names are kept.
func toolTitle(name string) string {
	if name == "" || name[0] < 'a' || name[0] > 'z' || strings.Contains(name, "__") {
		return name
	}
	return string(name[0]-'a'+'A') + name[1:]
}

func (p *parser) codexProgress(line []byte) {
	var ev struct {
		Type string `json:"type"`
		Item struct {
			Type     string `json:"type"`
			Command  string `json:"command"`
			ExitCode *int   `json:"exit_code"`
			Status   string `json:"status"`
			Changes  []struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
			} `json:"changes"`
			Query  string `json:"query"`
			Server string `json:"server"`
			Tool   string `json:"tool"`
		} `json:"item"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	it := ev.Item
	switch {
	case it.Type == "command_execution" && ev.Type == "item.started":
		p.say("$ " + shortCommand(it.Command))
	case it.Type == "command_execution" && ev.Type == "item.completed":
		code := "?"
		if it.ExitCode != nil {
			code = strconv.Itoa(*it.ExitCode)
		} else if it.Status == "declined" {
			code = "declined"
		}
		p.say("exit " + code + ": " + shortCommand(it.Command))
	case it.Type == "file_change" && ev.Type == "item.completed" && len(it.Changes) > 0:
		verb := map[string]string{"add": "Add", "delete": "Delete"}[it.Changes[0].Kind]
		if verb == "" {
			verb = "Edit"
		}
		s := verb + " " + shortPath(it.Changes[0].Path)
		if n := len(it.Changes) - 1; n > 0 {
			s += " (+" + strconv.Itoa(n) + " more)"
		}
		if it.Status == "failed" {
			s += " failed"
		}
		p.say(s)
	case it.Type == "web_search" && ev.Type == "item.started" && it.Query != "":
		p.say("WebSearch " + it.Query)
	case it.Type == "web_search" && ev.Type == "item.completed" && it.Query != "":
		p.say("WebSearch " + it.Query)
	case it.Type == "mcp_tool_call" && ev.Type == "item.started":
		p.say("MCP " + it.Server + "." + it.Tool)
	}
}

func (p *parser) piToolProgress(line []byte) {
	var ev struct {
		Type     string          `json:"type"`
		ToolName string          `json:"toolName"`
		Args     json.RawMessage `json:"args"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "tool_execution_start" {
		return
	}
	p.say(toolUseLine(ev.ToolName, ev.Args))
}

func (p *parser) piTextProgress(line []byte) {
	m, ok := piAssistantEnd(line)
	if !ok {
		return
	}
	for _, c := range m.Content {
		if c.Type == "text" {
			if s := firstLine(c.Text); s != "" {
				p.say(s)
				return
			}
		}
	}
}

// progressText makes one line: control characters become spaces,
// credential-looking values "…" (before and after the shortening, which
// may split or join what the pattern sees), runs of space one.
func progressText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = redact.Credentials(s)
	return strings.Join(strings.Fields(s), " ")
}

// firstLine is the first non-blank line of s.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// shellWrappers are the shells Codex runs commands through ("/bin/bash
// -lc 'cmd'"); the line shows the command itself.
var shellWrappers = []string{"/bin/bash -lc ", "/bin/bash -c ", "bash -lc ", "bash -c ", "/bin/zsh -lc ", "/bin/zsh -c ", "zsh -lc ", "/bin/sh -c ", "sh -c "}

// shortCommand unwraps a shell wrapper, drops URL queries and cuts long
// paths (progressText then redacts the line).
func shortCommand(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	for _, w := range shellWrappers {
		if rest, ok := strings.CutPrefix(cmd, w); ok {
			cmd = unquoteShell(rest)
			break
		}
	}
	fields := strings.Fields(cmd)
	for i, f := range fields {
		fields[i] = shortToken(f)
	}
	return strings.Join(fields, " ")
}

// unquoteShell removes one level of single or double quotes around s when
// they enclose all of it ('it'\”s' is unescaped).
func unquoteShell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'")
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.ContainsAny(s[1:len(s)-1], `"\`) {
		return s[1 : len(s)-1]
	}
	return s
}

// shortToken shortens one word of a command: a URL loses its query,
// fragment and user information, a path keeps its last two components.
// Surrounding quotes and a leading NAME= stay.
func shortToken(tok string) string {
	core := strings.Trim(tok, `'"`)
	if core == "" {
		return tok
	}
	pre, post := tok[:strings.Index(tok, core)], tok[strings.Index(tok, core)+len(core):]
	if i := strings.Index(core, "://"); i > 0 {
		return pre + core[:strings.IndexAny(core, "/:")] + shortURL(core[strings.IndexAny(core, "/:"):]) + post
	}
	if k, v, ok := strings.Cut(core, "="); ok && strings.Contains(v, "/") && !strings.Contains(k, "/") {
		return pre + k + "=" + shortPath(v) + post
	}
	if strings.Contains(core, "/") {
		return pre + shortPath(core) + post
	}
	return tok
}

// shortURL is rest of a URL after its scheme ("://host/path?q") without
// the query, fragment or user information.
func shortURL(rest string) string {
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if after, ok := strings.CutPrefix(rest, "://"); ok {
		host, path, _ := strings.Cut(after, "/")
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		if path != "" {
			return "://" + host + "/" + path
		}
		return "://" + host
	}
	return rest
}

// urlHost is the host of a URL (the URL itself, query dropped, when it
// does not parse).
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return shortToken(raw)
	}
	return u.Hostname()
}

// shortPath keeps the last two components of a path with more: a
// workspace's absolute paths say little in one line and may say much
// about the host.
func shortPath(p string) string {
	parts := strings.Split(strings.TrimRight(p, "/"), "/")
	var kept []string
	for _, s := range parts {
		if s != "" && s != "." {
			kept = append(kept, s)
		}
	}
	if len(kept) <= 2 {
		return p
	}
	return "…/" + strings.Join(kept[len(kept)-2:], "/")
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
