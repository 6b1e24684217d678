package acp

import (
	"encoding/json"
	"testing"
)

// FuzzParams: no params an editor sends make the decoding of a method's
// params, a prompt's blocks or its MCP servers panic; bad ones are -32602.
func FuzzParams(f *testing.F) {
	for _, s := range []string{
		`{"cwd":"/w","mcpServers":[{"name":"a","command":"x","args":["1"],"env":[{"name":"K","value":"V"}]}]}`,
		`{"cwd":"/w","mcpServers":[{"type":"http","name":"h","url":"http://127.0.0.1:1/mcp","headers":[{"name":"A","value":"b"}]}]}`,
		`{"sessionId":"s_1","prompt":[{"type":"text","text":"hi"},{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`,
		`{"sessionId":"s_1","prompt":[{"type":"resource_link","uri":"file:///w/a","name":"a"}]}`,
		`{"sessionId":1,"prompt":{}}`, `[]`, `null`, `"x"`, `{"mcpServers":[null,{}]}`, `{"prompt":[null,1,"x",{"type":5}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var n newSessionParams
		if err := decodeParams(raw, &n); err == nil {
			if _, err := mcpServers(n.MCPServers); err != nil && err.Code != CodeInvalidParams {
				t.Errorf("mcpServers: code %d", err.Code)
			}
		} else if err.Code != CodeInvalidParams {
			t.Errorf("decodeParams: code %d", err.Code)
		}
		var p promptParams
		if err := decodeParams(raw, &p); err == nil && p.Prompt != nil {
			if _, err := promptText(*p.Prompt, "/w"); err != nil && err.Code != CodeInvalidParams {
				t.Errorf("promptText: code %d", err.Code)
			}
		}
		var blocks []json.RawMessage
		if json.Unmarshal(raw, &blocks) == nil {
			_, _ = promptText(blocks, "/w")
		}
	})
}
