package app

import (
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// Endpoints and keys (docs/runtime.md, "Endpoints and keys"): a stored
// session goes on at the endpoint it was stored with unless the client
// overrides it explicitly, and a key is sent only to the origin it was
// given for.

// resumeOverrides are the configuration overrides of a stored session:
// the client's explicit ones (over) on top of the stored endpoint, and the
// stored wire API to apply to the profile ("" for the configuration's).
// A client that names another profile takes that profile's settings;
// one that names another base URL takes the profile's configured wire.
func resumeOverrides(over config.Overrides, stored server.Endpoint) (config.Overrides, string) {
	if over.Provider != "" && over.Provider != stored.Provider {
		return over, ""
	}
	over.Provider = stored.Provider
	if over.Model == "" {
		over.Model = stored.Model
	}
	if over.BaseURL != "" || stored.BaseURL == "" {
		return over, ""
	}
	over.BaseURL = stored.BaseURL
	return over, stored.WireAPI
}

// origin is u's scheme, host and port, lower case, with the scheme's
// default port made explicit; "" when u is not an absolute http(s) URL.
func origin(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || p.Host == "" {
		return ""
	}
	scheme := strings.ToLower(p.Scheme)
	port := p.Port()
	switch {
	case port != "":
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return ""
	}
	return scheme + "://" + strings.ToLower(p.Hostname()) + ":" + port
}

// sameOrigin says a and b are URLs of one origin.
func sameOrigin(a, b string) bool {
	o := origin(a)
	return o != "" && o == origin(b)
}

// sessionKey is the environment the session's model client takes its key
// from, chosen for the endpoint cfg's active profile ends up with:
//   - this process's own key (its environment, or the configuration
//     file's api_key) when this process's configuration gives the profile
//     that endpoint's origin;
//   - else the client's key (provider_key) when it was sent for the
//     variable the profile names and for that origin
//     (provider_key_base_url).
//
// A profile that needs no key needs neither. When a key exists but none is
// for the endpoint, the error says which key is for which endpoint and
// what to do; a missing key is left to cfg.APIKey's message.
func (a *App) sessionKey(cfg *config.Config, workspace string, over config.Overrides, req proto.SessionStart) (map[string]string, error) {
	name, prof := cfg.ActiveProvider()
	if prof.APIKey == "" && prof.APIKeyEnv == "" {
		return a.opts.Env, nil
	}
	own := prof.BaseURL // the process's own unless this session overrode it
	if over.BaseURL != "" {
		own = ""
		if l, err := a.LoadConfig(workspace, config.Overrides{Provider: name}); err == nil {
			_, p := l.Config.ActiveProvider()
			own = p.BaseURL
		}
	}
	hasOwn := prof.APIKey != "" || a.opts.Env[prof.APIKeyEnv] != ""
	if hasOwn && sameOrigin(own, prof.BaseURL) {
		return a.opts.Env, nil
	}
	usable := req.ProviderKey != "" && prof.APIKey == "" && req.ProviderKeyEnv == prof.APIKeyEnv
	if usable && sameOrigin(req.ProviderKeyBaseURL, prof.BaseURL) {
		env := make(map[string]string, len(a.opts.Env)+1)
		maps.Copy(env, a.opts.Env)
		env[prof.APIKeyEnv] = req.ProviderKey
		return env, nil
	}
	var why []string
	if hasOwn {
		src := prof.APIKeyEnv + " of this server"
		if prof.APIKey != "" {
			src = fmt.Sprintf("providers.%s.api_key of this server's configuration", name)
		}
		why = append(why, fmt.Sprintf("the key in %s is for %s", src, originOrNone(own)))
	}
	if usable {
		if req.ProviderKeyBaseURL == "" {
			why = append(why, fmt.Sprintf("the client's key in %s came without the endpoint it is for (upgrade that client)", req.ProviderKeyEnv))
		} else {
			why = append(why, fmt.Sprintf("the client's key in %s is for %s", req.ProviderKeyEnv, origin(req.ProviderKeyBaseURL)))
		}
	}
	if len(why) == 0 {
		return nil, nil // no key at all: cfg.APIKey says which variable to set
	}
	return nil, fmt.Errorf("provider %s: no API key was given for this session's endpoint %s (%s); a key is sent only to the endpoint it was given for: run the client with SCV_BASE_URL=%s (or --base-url) and that endpoint's key in %s, or with --base-url naming the endpoint your key is for to move the session there",
		name, prof.BaseURL, strings.Join(why, "; "), prof.BaseURL, keyVar(name, prof.APIKeyEnv))
}

func originOrNone(u string) string {
	if o := origin(u); o != "" {
		return o
	}
	return "no endpoint"
}

func keyVar(profile, env string) string {
	if env != "" {
		return env
	}
	return fmt.Sprintf("providers.%s.api_key", profile)
}
