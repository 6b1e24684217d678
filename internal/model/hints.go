package model

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// Hints: an error of the provider says what to do next, as the missing-key
// error does. The key's source (Options.KeySource) names where the key
// came from without ever showing it.

// statusHint is what to do about an error status, or "". listing says the
// request was GET /models.
func (c *core) statusHint(status int, listing bool) string {
	switch status {
	case http.StatusUnauthorized:
		if c.opts.APIKey == "" {
			return "no API key was sent: name the variable that holds it with api_key_env in the provider profile"
		}
		if c.opts.KeySource != "" {
			return fmt.Sprintf("the provider refused the key from %s: check that it holds a valid key for %s", c.opts.KeySource, c.base.Host)
		}
		return fmt.Sprintf("the provider refused the key: check that it is a valid key for %s", c.base.Host)
	case http.StatusForbidden:
		src := "the key"
		if c.opts.KeySource != "" {
			src = "the key from " + c.opts.KeySource
		}
		return src + " may not use this model or endpoint (`/model` or `scv models` lists what it serves)"
	case http.StatusNotFound:
		if listing {
			return fmt.Sprintf("%s has no model listing (GET /models): check base_url", c.base)
		}
		return fmt.Sprintf("no such model or path at %s: `/model` or `scv models` lists what this endpoint serves; if that fails too, check base_url", c.base)
	}
	return ""
}

// connectMessage says why a request reached no server, with what to check.
func (c *core) connectMessage(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connect to model provider: is the server at %s running? (connection refused)", c.base)
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("connect to model provider: the host %s does not resolve: check base_url (%s)", c.base.Hostname(), c.base)
	}
	return "connect to model provider: " + err.Error()
}

// imageHint marks a 400 answer that is about the request's images: many
// models take text only, and their endpoints say so in their own words.
// The hint comes first so the bound on the message cuts the provider's
// text, not the hint.
func (c *core) imageHint(req Request, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != http.StatusBadRequest || !req.hasImages() || !aboutImages(e.Message) {
		return err
	}
	hint := "this model may not accept images; pick a vision model (`/model` or `scv models` lists them) or send the prompt without images"
	if aboutSize(e.Message) {
		// Providers bound an image below SCV's own 8 MiB (Anthropic:
		// 5 MB, 8000 pixels a side): the model takes images, not this one.
		hint = "the provider refused an image as too large (in bytes or pixels); shrink or crop it and send the prompt again"
	}
	e.Message = cleanMessage(hint+" ("+e.Message+")", c.secrets)
	return err
}

func aboutSize(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"exceed", "too large", "too big", "maximum", "dimension", "size"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

func aboutImages(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"image", "vision", "multimodal", "multi-modal", "modalit"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}
