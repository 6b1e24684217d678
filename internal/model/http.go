package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps a provider's Retry-After.
const maxRetryAfter = 60 * time.Second

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// FramingAllowance is how many body bytes may be read per byte of
// max_response_bytes: content is counted against max_response_bytes, and
// the framing around it (SSE lines, JSON keys, ids, repeated final
// objects: 190–330 bytes per delta event on real streams) against this
// multiple of it.
const FramingAllowance = 64

// RepeatAllowance is how many times the content received so far one event
// may repeat beyond max_sse_event_bytes: a Responses stream ends with
// events that carry the whole answer again, JSON-escaped.
const RepeatAllowance = 4

// anthropicVersion is the Messages API version SCV speaks.
const anthropicVersion = "2023-06-01"

// eventParser folds one SSE event into its collector; done reports the
// response completed.
type eventParser interface {
	event(name string, data []byte) (done bool, err error)
	collector() *collector
}

// post sends body to path and feeds the SSE stream to a parser from
// newParser (a fresh one per attempt), retrying only while nothing has
// reached the caller. It returns the parser of the successful attempt.
func (c *core) post(ctx context.Context, path string, body reqBody, newParser func() eventParser) (eventParser, error) {
	for attempt := 0; ; attempt++ {
		p := newParser()
		retry, wait, err := c.attempt(ctx, path, body, p)
		if err == nil {
			return p, nil
		}
		if !retry || attempt >= c.opts.MaxRetries {
			if attempt > 0 && retry {
				err.Message = cleanMessage(fmt.Sprintf("%s (after %d attempts)", err.Message, attempt+1), c.secrets)
			}
			return nil, err
		}
		if wait <= 0 {
			wait = backoff(attempt)
		}
		c.log.Warn("model request failed; retrying", "attempt", attempt+1, "next_attempt", attempt+2, "max_attempts", c.opts.MaxRetries+1,
			"wait", wait, "status", err.HTTPStatus, "error", err.Message)
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, c.newError(CodeProvider, "model request cancelled", serr)
		}
	}
}

// backoff is jittered doubling from 1 s: 1 s, 2 s, 4 s … (±20 %), ≤ 60 s.
func backoff(attempt int) time.Duration {
	d := time.Second << min(attempt, 6)
	d = min(d, maxRetryAfter)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

func (c *core) setHeaders(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	switch {
	case c.anthropic:
		req.Header.Set("anthropic-version", anthropicVersion)
		if c.opts.APIKey != "" {
			req.Header.Set("x-api-key", c.opts.APIKey)
		}
	case c.opts.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	for k, v := range c.opts.Headers {
		req.Header.Set(k, v)
	}
}

func (c *core) attempt(ctx context.Context, path string, body reqBody, p eventParser) (retry bool, wait time.Duration, e *Error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.base.String()+path, body.reader())
	if err != nil {
		return false, 0, c.newError(CodeProvider, "build request: "+err.Error(), err)
	}
	req.ContentLength = int64(body.size)
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	c.setHeaders(req)
	resp, err := c.http.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return false, 0, c.newError(CodeProvider, "model request cancelled", ctx.Err())
		case errors.Is(err, errRedirect):
			return false, 0, c.newError(CodeProvider, "the provider answered with a redirect, which is refused so the API key reaches only base_url: set base_url to the final endpoint", err)
		case actx.Err() != nil:
			return true, 0, c.newError(CodeProvider, fmt.Sprintf("model request timed out after %s", c.opts.Timeout), err)
		}
		return true, 0, c.newError(CodeProvider, c.connectMessage(err), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp)
	}
	lr := &limitReader{r: resp.Body, limit: c.limits.MaxResponseBytes * FramingAllowance}
	e = c.readStream(ctx, actx, lr, p)
	col := p.collector()
	if e != nil && errors.Is(e.cause, errStreamRetryable) && !col.delivered && len(col.calls) == 0 {
		return true, 0, e
	}
	return false, 0, e
}

// errStreamRetryable marks stream failures that may be retried while
// nothing has reached the caller: the stream ended or timed out early, or
// the provider said it was overloaded.
var errStreamRetryable = errors.New("stream failed")

func (c *core) readStream(ctx, actx context.Context, lr *limitReader, p eventParser) *Error {
	sr := newSSEReader(lr)
	col := p.collector()
	for {
		name, data, err := sr.next(c.limits.MaxSSEEventBytes + RepeatAllowance*col.content)
		if err == io.EOF {
			if f, ok := p.(interface{ completeAtEOF() bool }); ok && f.completeAtEOF() {
				return nil
			}
		}
		if err != nil {
			return c.streamError(ctx, actx, err)
		}
		done, err := p.event(name, data)
		if err != nil {
			var me *Error
			if errors.As(err, &me) {
				me.Message = cleanMessage(me.Message, c.secrets)
				return me
			}
			return c.newError(CodeProvider, err.Error(), err)
		}
		if done {
			return nil
		}
	}
}

func (c *core) streamError(ctx, actx context.Context, err error) *Error {
	switch {
	case errors.Is(err, errEventTooLarge):
		return c.newError(CodeResponse, fmt.Sprintf("a stream event exceeded provider_limits.max_sse_event_bytes (%d)", c.limits.MaxSSEEventBytes), err)
	case errors.Is(err, errResponseTooLarge):
		return c.newError(CodeResponse, fmt.Sprintf("the stream exceeded %d bytes (%d × provider_limits.max_response_bytes, framing included)", c.limits.MaxResponseBytes*FramingAllowance, FramingAllowance), err)
	case ctx.Err() != nil:
		return c.newError(CodeProvider, "model request cancelled", ctx.Err())
	case actx.Err() != nil:
		return c.newError(CodeProvider, fmt.Sprintf("model response timed out after %s", c.opts.Timeout), errStreamRetryable)
	case errors.Is(err, io.EOF):
		return c.newError(CodeProvider, "stream ended before the response completed", errStreamRetryable)
	}
	return c.newError(CodeProvider, "stream ended before the response completed: "+err.Error(), errStreamRetryable)
}

func (c *core) statusError(resp *http.Response) (bool, time.Duration, *Error) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := strings.TrimSpace(fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
	// The hint before the provider's text, so the bound on the message
	// cuts the latter.
	hint := c.statusHint(resp.StatusCode, resp.Request != nil && resp.Request.Method == http.MethodGet)
	pm := providerMessage(b)
	switch {
	case hint != "" && pm != "":
		msg += ": " + hint + " (the provider said: " + pm + ")"
	case hint != "":
		msg += ": " + hint
	case pm != "":
		msg += ": " + pm
	}
	e := c.newError(CodeProvider, msg, nil)
	e.HTTPStatus = resp.StatusCode
	retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	return retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()), e
}

// providerMessage extracts {"error":{"message":…}}, {"error":"…"} or
// {"message":…} from an error body, else the body text itself.
func providerMessage(b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > maxMessage {
		s = s[:maxMessage]
	}
	return s
}

// retryAfter parses seconds or an HTTP date, capped at 60 s; 0 if absent.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseFloat(h, 64); err == nil {
		if !(n > 0) {
			return 0
		}
		if n >= maxRetryAfter.Seconds() {
			return maxRetryAfter
		}
		d = time.Duration(n * float64(time.Second))
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}
