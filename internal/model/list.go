package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"
)

// Lister is a client that can ask its provider which models it offers.
type Lister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// Bounds of a model listing: the answer is small on every provider known,
// so a larger one is refused rather than read.
const (
	listTimeout   = 10 * time.Second
	maxListBytes  = 4 << 20
	maxListModels = 5000
)

// ListModels asks GET {base_url}/models with the client's key and headers
// (the same HTTP client, so redirects are refused). The OpenAI, Ollama and
// Anthropic endpoints all answer {"data":[{"id":…}]}; the ids come back
// sorted. Failures are *Error values with CodeProvider.
func (c *core) ListModels(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	u := c.base.String() + "/models"
	if c.anthropic {
		u += "?limit=1000" // its listing is paged, 20 ids by default
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, c.newError(CodeProvider, "build request: "+err.Error(), err)
	}
	c.setHeaders(req)
	req.Header.Del("Content-Type")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, errRedirect):
			return nil, c.redact(c.newError(CodeProvider, "the provider answered GET /models with a redirect, which is refused so the API key reaches only base_url", err))
		case ctx.Err() != nil:
			return nil, c.redact(c.newError(CodeProvider, fmt.Sprintf("listing models: no answer within %s", listTimeout), err))
		}
		return nil, c.redact(c.newError(CodeProvider, "listing models: "+c.connectMessage(err), err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _, e := c.statusError(resp)
		e.Message = "listing models: " + e.Message
		return nil, c.redact(e)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return nil, c.redact(c.newError(CodeProvider, "listing models: read the answer: "+err.Error(), err))
	}
	if len(b) > maxListBytes {
		return nil, c.newError(CodeProvider, fmt.Sprintf("listing models: the answer is larger than %d bytes", maxListBytes), nil)
	}
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Data == nil {
		return nil, c.newError(CodeProvider, `listing models: the answer is not {"data":[{"id":…}]}`, err)
	}
	ids := make([]string, 0, min(len(v.Data), maxListModels))
	for _, m := range v.Data {
		if m.ID != "" && len(ids) < maxListModels {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
