package clawbot

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/scv-agent/scv/internal/textcut"
)

// The iLink HTTP API: WeChat's bot gateway. Authenticated calls are JSON
// POSTs with the bot token; getupdates long-polls for new messages and
// sendmessage answers one.

// DefaultBaseURL is iLink's public origin.
const DefaultBaseURL = "https://ilinkai.weixin.qq.com"

// channelVersion is sent as base_info.channel_version in every
// authenticated body.
const channelVersion = "1.0.0"

// Bounds of the calls.
const (
	// pollTimeout is the client's limit of one getupdates: the server
	// holds the request for about 35 s when nothing arrives.
	pollTimeout = 45 * time.Second
	// sendTimeout bounds one sendmessage.
	sendTimeout = 30 * time.Second
	// maxPollBody bounds a getupdates answer (4,096 messages and their text).
	maxPollBody = 32 << 20
	// maxSmallBody bounds every other answer.
	maxSmallBody = 1 << 20
	// maxErrMsg bounds the part of a service error message that is kept.
	maxErrMsg = 200
)

// Token is a bot token. It never prints: String and the fmt verbs give a
// placeholder, so a token cannot reach a log or an error by accident.
type Token string

func (Token) String() string { return "[token]" }

// GoString keeps %#v from printing it too.
func (Token) GoString() string { return "[token]" }

// Reveal returns the token itself, for the Authorization header only.
func (t Token) Reveal() string { return string(t) }

// Client makes iLink's authenticated calls for one bot.
type Client struct {
	// BaseURL is the API origin (and path prefix, if any) without a
	// trailing slash.
	BaseURL string
	Token   Token
	// HTTP is the transport; nil is a client without a global timeout
	// (every call has its own).
	HTTP *http.Client
	// UIN returns a fresh random number per request, sent as the
	// X-WECHAT-UIN header; nil draws from math/rand/v2.
	UIN func() uint32
	// PollTimeout is the client's limit of one getupdates; 0 is 45 s.
	PollTimeout time.Duration
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return HTTPClient()
}

// HTTPClient is the client of iLink calls: its own transport, with no
// proxy (nothing comes from the process environment) and bounded
// connection set-up; every call has its own timeout.
func HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: pollTimeout + 5*time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}}
}

// uinHeader is the X-WECHAT-UIN value: base64 of the decimal text of a
// random uint32.
func (c *Client) uinHeader() string {
	n := rand.Uint32()
	if c.UIN != nil {
		n = c.UIN()
	}
	return base64.StdEncoding.EncodeToString([]byte(strconv.FormatUint(uint64(n), 10)))
}

// post sends an authenticated call and returns the status and the body
// (at most limit bytes).
func (c *Client) post(ctx context.Context, path string, body map[string]any, limit int64) (int, []byte, error) {
	body["base_info"] = map[string]string{"channel_version": channelVersion}
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("AuthorizationType", "ilink_bot_token")
	req.Header.Set("Authorization", "Bearer "+c.Token.Reveal())
	req.Header.Set("X-WECHAT-UIN", c.uinHeader())
	resp, err := c.http().Do(req)
	if err != nil {
		return 0, nil, transportError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return resp.StatusCode, nil, transportError(err)
	}
	if int64(len(data)) > limit {
		return resp.StatusCode, nil, fmt.Errorf("the answer is larger than %d bytes", limit)
	}
	return resp.StatusCode, data, nil
}

// transportError drops the URL that net/http puts in its errors (it is
// harmless, but errors end up in status and logs) and keeps the cause.
func transportError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			err = inner
		}
	}
	return &NetError{Err: err}
}

// NetError is a failure to reach the service or to read its answer.
type NetError struct{ Err error }

func (e *NetError) Error() string { return "cannot reach iLink: " + e.Err.Error() }
func (e *NetError) Unwrap() error { return e.Err }

// APIError is a call the service answered with an error: an HTTP status
// other than 2xx, or a non-zero ret or errcode in the body.
type APIError struct {
	Op      string
	Status  int
	Ret     int
	ErrCode int
	// ErrMsg is the service's message, cut to a bounded single line.
	ErrMsg string
}

func (e *APIError) Error() string {
	var parts []string
	if e.Status != 0 && (e.Status < 200 || e.Status > 299) {
		parts = append(parts, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Ret != 0 {
		parts = append(parts, fmt.Sprintf("ret %d", e.Ret))
	}
	if e.ErrCode != 0 {
		parts = append(parts, fmt.Sprintf("errcode %d", e.ErrCode))
	}
	if e.ErrMsg != "" {
		parts = append(parts, strconv.Quote(e.ErrMsg))
	}
	msg := e.Op + " refused: " + strings.Join(parts, ", ")
	if e.SessionExpired() {
		msg += " (the bot's session expired: log in again with `scv clawbot login`)"
	}
	return msg
}

// SessionExpired reports iLink's code -14: the token no longer works.
func (e *APIError) SessionExpired() bool { return e.Ret == -14 || e.ErrCode == -14 }

// cleanMsg keeps a bounded, single-line, printable form of a service
// message.
func cleanMsg(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxErrMsg {
		s = textcut.Prefix(s, maxErrMsg) + "…"
	}
	return s
}

// status is the error part every answer may carry.
type status struct {
	Ret     *int   `json:"ret"`
	ErrCode *int   `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

func (s status) failed() bool {
	return s.Ret != nil && *s.Ret != 0 || s.ErrCode != nil && *s.ErrCode != 0
}

func (s status) err(op string, httpStatus int) *APIError {
	e := &APIError{Op: op, Status: httpStatus, ErrMsg: cleanMsg(s.ErrMsg)}
	if s.Ret != nil {
		e.Ret = *s.Ret
	}
	if s.ErrCode != nil {
		e.ErrCode = *s.ErrCode
	}
	return e
}

// Updates is one getupdates answer.
type Updates struct {
	// Messages are the batch's messages, each as the service sent it.
	Messages []json.RawMessage
	// Cursor is get_updates_buf: the cursor after the batch.
	Cursor string
	// TimedOut says the client's own timeout ended the poll: an empty
	// batch that validates nothing.
	TimedOut bool
}

// GetUpdates long-polls for new messages after cursor. A client timeout
// (45 s) is an empty batch with TimedOut set; ctx's end is an error.
func (c *Client) GetUpdates(ctx context.Context, cursor string) (Updates, error) {
	limit := c.PollTimeout
	if limit <= 0 {
		limit = pollTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	code, body, err := c.post(pctx, "/ilink/bot/getupdates", map[string]any{"get_updates_buf": cursor}, maxPollBody)
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return Updates{Cursor: cursor, TimedOut: true}, nil
		}
		return Updates{}, err
	}
	var st status
	_ = json.Unmarshal(body, &st)
	if code < 200 || code > 299 || st.failed() {
		return Updates{}, st.err("getupdates", code)
	}
	var r struct {
		Msgs   *[]json.RawMessage `json:"msgs"`
		Cursor *string            `json:"get_updates_buf"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Updates{}, fmt.Errorf("getupdates: the answer is not the expected JSON object: %v", cleanMsg(err.Error()))
	}
	if r.Msgs == nil || r.Cursor == nil {
		return Updates{}, errors.New("getupdates: the answer has no msgs array or no get_updates_buf string")
	}
	return Updates{Messages: *r.Msgs, Cursor: *r.Cursor}, nil
}

// OutMessage is one text message to send.
type OutMessage struct {
	To, ClientID, ContextToken, Text string
}

// SendMessage sends one text message. Any 2xx answer whose body has no
// non-zero ret or errcode is a success, whether the body is JSON or not.
func (c *Client) SendMessage(ctx context.Context, m OutMessage) error {
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	msg := map[string]any{
		"from_user_id":  "",
		"to_user_id":    m.To,
		"client_id":     m.ClientID,
		"message_type":  2,
		"message_state": 2,
		"context_token": m.ContextToken,
		"item_list":     []any{map[string]any{"type": 1, "text_item": map[string]string{"text": m.Text}}},
	}
	code, body, err := c.post(sctx, "/ilink/bot/sendmessage", map[string]any{"msg": msg}, maxSmallBody)
	if err != nil {
		return err
	}
	var st status
	_ = json.Unmarshal(body, &st) // a body that is not JSON carries no refusal
	if code < 200 || code > 299 || st.failed() {
		return st.err("sendmessage", code)
	}
	return nil
}

// Retryable says a failed send may succeed when tried again with the same
// client id: transport failures, 5xx, 401, 408 and 429. Every other
// refusal is final.
func Retryable(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return true
	}
	if ae.Status >= 200 && ae.Status <= 299 {
		return false // an explicit refusal in a successful answer
	}
	switch {
	case ae.Status >= 500, ae.Status == http.StatusUnauthorized, ae.Status == http.StatusRequestTimeout, ae.Status == http.StatusTooManyRequests:
		return true
	}
	return false
}
