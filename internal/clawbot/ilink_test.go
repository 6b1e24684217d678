package clawbot_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
)

func newClient(fake *ilinktest.Server) *clawbot.Client {
	return &clawbot.Client{BaseURL: fake.URL(), Token: "tok-secret-123", PollTimeout: 5 * time.Second}
}

// Every authenticated call carries the bearer token, the token type, a
// fresh X-WECHAT-UIN (base64 of a decimal uint32) and base_info.
func TestAuthenticatedCalls(t *testing.T) {
	fake := ilinktest.New(t)
	c := newClient(fake)
	ctx := t.Context()
	fake.Batch("c1")
	fake.Batch("c2")
	if _, err := c.GetUpdates(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetUpdates(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMessage(ctx, clawbot.OutMessage{To: "alice", ClientID: "cid-1", ContextToken: "ctx-9", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	uins := map[string]bool{}
	for _, r := range reqs {
		h := r.Header
		if r.Method != "POST" || h.Get("Content-Type") != "application/json" || h.Get("AuthorizationType") != "ilink_bot_token" ||
			h.Get("Authorization") != "Bearer tok-secret-123" {
			t.Errorf("%s %s headers = %v", r.Method, r.Path, h)
		}
		uin, err := base64.StdEncoding.DecodeString(h.Get("X-WECHAT-UIN"))
		if err != nil {
			t.Errorf("X-WECHAT-UIN %q is not base64: %v", h.Get("X-WECHAT-UIN"), err)
		}
		if _, err := strconv.ParseUint(string(uin), 10, 32); err != nil {
			t.Errorf("X-WECHAT-UIN decodes to %q, not the decimal text of a uint32", uin)
		}
		uins[string(uin)] = true
		if d := cmp.Diff(map[string]any{"channel_version": "1.0.0"}, r.Body["base_info"]); d != "" {
			t.Errorf("%s base_info (-want +got):\n%s", r.Path, d)
		}
	}
	if len(uins) != 3 {
		t.Errorf("X-WECHAT-UIN repeated across requests: %v", uins)
	}
	if reqs[0].Body["get_updates_buf"] != "" || reqs[1].Body["get_updates_buf"] != "c1" {
		t.Errorf("getupdates cursors = %v, %v", reqs[0].Body["get_updates_buf"], reqs[1].Body["get_updates_buf"])
	}
	want := map[string]any{"from_user_id": "", "to_user_id": "alice", "client_id": "cid-1", "message_type": float64(2), "message_state": float64(2),
		"context_token": "ctx-9", "item_list": []any{map[string]any{"type": float64(1), "text_item": map[string]any{"text": "hi"}}}}
	if d := cmp.Diff(want, reqs[2].Body["msg"]); d != "" {
		t.Errorf("sendmessage msg (-want +got):\n%s", d)
	}
}

func TestGetUpdatesAnswers(t *testing.T) {
	msg := ilinktest.Text(1, "alice", "hi")
	tests := []struct {
		name    string
		answer  ilinktest.Answer
		msgs    int
		cursor  string
		err     string
		expired bool
	}{
		{"success without ret", ilinktest.Answer{JSON: map[string]any{"msgs": []any{msg}, "get_updates_buf": "n1"}}, 1, "n1", "", false},
		{"success with ret 0", ilinktest.Answer{JSON: map[string]any{"ret": 0, "msgs": []any{}, "get_updates_buf": "n2"}}, 0, "n2", "", false},
		{"ret", ilinktest.Answer{JSON: map[string]any{"ret": -1, "errmsg": "bad\x1b[31m thing", "msgs": []any{}, "get_updates_buf": "x"}}, 0, "", `getupdates refused: ret -1, "bad [31m thing"`, false},
		{"errcode", ilinktest.Answer{JSON: map[string]any{"errcode": 40001, "msgs": []any{}, "get_updates_buf": "x"}}, 0, "", "errcode 40001", false},
		{"session expired", ilinktest.Answer{JSON: map[string]any{"ret": -14, "errmsg": "session timeout"}}, 0, "", "log in again", true},
		{"errcode -14", ilinktest.Answer{JSON: map[string]any{"errcode": -14}}, 0, "", "log in again", true},
		{"http 502", ilinktest.Answer{Status: 502, Raw: "bad gateway"}, 0, "", "HTTP 502", false},
		{"not json", ilinktest.Answer{Raw: "<html>hello</html>"}, 0, "", "not the expected JSON object", false},
		{"no msgs", ilinktest.Answer{JSON: map[string]any{"get_updates_buf": "x"}}, 0, "", "no msgs array", false},
		{"no cursor", ilinktest.Answer{JSON: map[string]any{"msgs": []any{}}}, 0, "", "no msgs array or no get_updates_buf", false},
		{"msgs not an array", ilinktest.Answer{JSON: map[string]any{"msgs": "x", "get_updates_buf": "x"}}, 0, "", "not the expected JSON object", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := ilinktest.New(t)
			fake.Poll(tt.answer)
			up, err := newClient(fake).GetUpdates(t.Context(), "c0")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				var ae *clawbot.APIError
				if got := errors.As(err, &ae) && ae.SessionExpired(); got != tt.expired {
					t.Errorf("session expired = %v, want %v", got, tt.expired)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(up.Messages) != tt.msgs || up.Cursor != tt.cursor || up.TimedOut {
				t.Errorf("updates = %+v", up)
			}
		})
	}
}

// A poll the client's own timeout ends is an empty batch that validates
// nothing; the caller's cancellation is an error.
func TestGetUpdatesClientTimeout(t *testing.T) {
	fake := ilinktest.New(t)
	fake.SetIdleHold(5 * time.Second)
	c := newClient(fake)
	c.PollTimeout = 100 * time.Millisecond
	up, err := c.GetUpdates(t.Context(), "c7")
	if err != nil || !up.TimedOut || up.Cursor != "c7" || len(up.Messages) != 0 {
		t.Fatalf("timed-out poll = %+v, %v", up, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	c.PollTimeout = time.Second
	if _, err := c.GetUpdates(ctx, "c7"); err == nil {
		t.Fatal("a cancelled poll returned no error")
	}
}

func TestSendMessageAnswers(t *testing.T) {
	tests := []struct {
		name      string
		answer    ilinktest.Answer
		ok        bool
		retryable bool
	}{
		{"2xx json", ilinktest.Answer{JSON: map[string]any{"ret": 0}}, true, false},
		{"2xx json without ret", ilinktest.Answer{JSON: map[string]any{}}, true, false},
		{"2xx not json", ilinktest.Answer{Raw: "ok"}, true, false},
		{"204 empty", ilinktest.Answer{Status: 204}, true, false},
		{"2xx ret", ilinktest.Answer{JSON: map[string]any{"ret": -2, "errmsg": "refused"}}, false, false},
		{"2xx errcode", ilinktest.Answer{JSON: map[string]any{"errcode": 45009}}, false, false},
		{"401", ilinktest.Answer{Status: 401, Raw: "no"}, false, true},
		{"408", ilinktest.Answer{Status: 408}, false, true},
		{"429", ilinktest.Answer{Status: 429}, false, true},
		{"500", ilinktest.Answer{Status: 500}, false, true},
		{"503", ilinktest.Answer{Status: 503, JSON: map[string]any{"ret": -1}}, false, true},
		{"400", ilinktest.Answer{Status: 400}, false, false},
		{"403", ilinktest.Answer{Status: 403}, false, false},
		{"404", ilinktest.Answer{Status: 404}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := ilinktest.New(t)
			fake.SendAnswer(tt.answer)
			err := newClient(fake).SendMessage(t.Context(), clawbot.OutMessage{To: "a", ClientID: "c", ContextToken: "t", Text: "x"})
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if err != nil && clawbot.Retryable(err) != tt.retryable {
				t.Errorf("retryable(%v) = %v, want %v", err, !tt.retryable, tt.retryable)
			}
		})
	}
	if !clawbot.Retryable(&clawbot.NetError{Err: errors.New("connection reset")}) {
		t.Error("a transport error is not retryable")
	}
}

func TestTokenNeverPrints(t *testing.T) {
	tok := clawbot.Token("tok-secret-123")
	c := clawbot.Credentials{Token: tok, BotID: "b"}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", c, c, c, tok)} {
		if strings.Contains(s, "secret") {
			t.Errorf("token printed: %s", s)
		}
	}
}

func TestParseMessage(t *testing.T) {
	text := func(id any, mutate func(m map[string]any)) json.RawMessage {
		m := ilinktest.Text(id, "alice", "hello")
		if mutate != nil {
			mutate(m)
		}
		b, _ := json.Marshal(m)
		return b
	}
	items := func(list ...any) func(map[string]any) {
		return func(m map[string]any) { m["item_list"] = list }
	}
	tests := []struct {
		name   string
		raw    json.RawMessage
		id     string
		text   string
		accept bool
	}{
		{"text", text(7, nil), "7", "hello", true},
		{"u64 max", json.RawMessage(`{"message_id":18446744073709551615,"from_user_id":"a","message_type":1,"context_token":"c","item_list":[{"type":1,"text_item":{"text":"x"}}]}`), "18446744073709551615", "x", true},
		{"number beyond u64", json.RawMessage(`{"message_id":18446744073709551616,"from_user_id":"a","message_type":1,"context_token":"c","item_list":[{"type":1,"text_item":{"text":"x"}}]}`), "", "x", false},
		{"negative id", text(-3, nil), "", "hello", false},
		{"fractional id", json.RawMessage(`{"message_id":1.5}`), "", "", false},
		{"exponent id", json.RawMessage(`{"message_id":1e3}`), "", "", false},
		{"string id kept exactly", text(" Ab-é/1 ", nil), " Ab-é/1 ", "hello", true},
		{"string id of 256 bytes", text(strings.Repeat("x", 256), nil), strings.Repeat("x", 256), "hello", true},
		{"string id of 257 bytes", text(strings.Repeat("x", 257), nil), "", "hello", false},
		{"empty string id", text("", nil), "", "hello", false},
		{"no id", json.RawMessage(`{"from_user_id":"a"}`), "", "", false},
		{"not an object", json.RawMessage(`[1,2]`), "", "", false},
		{"bot message", text(8, func(m map[string]any) { m["message_type"] = 2 }), "8", "hello", false},
		{"no sender", text(9, func(m map[string]any) { m["from_user_id"] = "" }), "9", "hello", false},
		{"no context token", text(10, func(m map[string]any) { delete(m, "context_token") }), "10", "hello", false},
		{"empty text", text(11, items(map[string]any{"type": 1, "text_item": map[string]any{"text": ""}})), "11", "", false},
		{"blank text", text(12, items(map[string]any{"type": 1, "text_item": map[string]any{"text": " \n\t"}})), "12", " \n\t", false},
		{"image only", text(13, items(map[string]any{"type": 2, "image_item": map[string]any{"url": "x"}})), "13", "", false},
		{"text items joined", text(14, items(
			map[string]any{"type": 1, "text_item": map[string]any{"text": "one"}},
			map[string]any{"type": 3, "voice_item": map[string]any{}},
			map[string]any{"type": 1, "text_item": map[string]any{"text": "two"}})), "14", "one\ntwo", true},
		{"malformed fields keep the id", json.RawMessage(`{"message_id":15,"item_list":"nope"}`), "15", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := clawbot.ParseMessage(tt.raw)
			if m.ID != tt.id || m.Text != tt.text || m.Accept != tt.accept {
				t.Errorf("ParseMessage = id %q text %q accept %v; want %q %q %v", m.ID, m.Text, m.Accept, tt.id, tt.text, tt.accept)
			}
		})
	}
}

func TestCheckBaseURL(t *testing.T) {
	ok := map[string]string{
		"https://ilinkai.weixin.qq.com":   "https://ilinkai.weixin.qq.com",
		"https://GW.example.com/prefix/":  "https://gw.example.com/prefix",
		"http://127.0.0.1:8080":           "http://127.0.0.1:8080",
		"http://127.9.9.9":                "http://127.9.9.9",
		"http://[::1]:9000/":              "http://[::1]:9000",
		"http://localhost:1234":           "http://localhost:1234",
		" https://ilinkai.weixin.qq.com/": "https://ilinkai.weixin.qq.com",
	}
	for in, want := range ok {
		if got, err := clawbot.CheckBaseURL(in); err != nil || got != want {
			t.Errorf("CheckBaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://10.0.0.1", "http://example.com", "http://192.168.1.2:80", "http://[::ffff:10.0.0.1]", "ftp://x", "https://u:p@x.com",
		"https://x.com/?a=1", "https://x.com/#f", "ilinkai.weixin.qq.com", "", "http://localhost.evil.com"} {
		if got, err := clawbot.CheckBaseURL(bad); err == nil {
			t.Errorf("CheckBaseURL(%q) = %q, accepted", bad, got)
		}
	}
}

func TestCheckAccount(t *testing.T) {
	for _, ok := range []string{"default", "a", "Work_2-x", strings.Repeat("a", 64)} {
		if err := clawbot.CheckAccount(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 65), "a b", "../x", "é", "a.json", "a/b"} {
		if err := clawbot.CheckAccount(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
