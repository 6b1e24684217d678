package app

import (
	"fmt"

	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/signin"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// SignIn returns the sign-in of the named agent as `scv agents login,
// logout, status and import` use it: the adapter with the user's
// [agents.<name>] override (a project config cannot set agents, so none is
// read), its private home, and the environment agent_<name> runs with —
// built by the same code, so a key SCV's own providers use never reaches
// the agent's login either.
func (a *App) SignIn(name string) (signin.Method, error) {
	d, ok := agents.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown agent %q", name)
	}
	loaded, err := a.LoadConfig("", NoOverrides)
	if err != nil {
		return nil, err
	}
	cfg := &loaded.Config
	ad, err := agents.Apply(d, agentOverride(cfg.Agents[name]))
	if err != nil {
		return nil, err
	}
	home := a.opts.Layout.Adapter(name)
	m, ok := signin.For(signin.Agent{
		Adapter: ad, Home: home, UserHome: paths.UserHome(a.opts.Env), PathEnv: a.opts.Env["PATH"],
		Env: ad.Env(agents.EnvSpec{Base: a.environ(), AdapterHome: home, SCVHome: a.opts.Layout.Home, Remove: cfg.KeyVariables()}),
	})
	if !ok {
		return nil, fmt.Errorf("agent %q has no sign-in", name)
	}
	return m, nil
}

// ActiveEndpoint is the active provider as an OpenAI-compatible endpoint
// with its key, read now (`scv agents import pi --from-scv-provider`).
func (a *App) ActiveEndpoint() (signin.Endpoint, error) {
	loaded, err := a.LoadConfig("", NoOverrides)
	if err != nil {
		return signin.Endpoint{}, err
	}
	cfg := &loaded.Config
	name, p := cfg.ActiveProvider()
	if _, ok := cfg.Providers[name]; !ok {
		return signin.Endpoint{}, fmt.Errorf("active provider %q is not configured", name)
	}
	key, err := cfg.APIKey(a.opts.Env)
	if err != nil || key == "" {
		env := p.APIKeyEnv
		if env == "" {
			env = "-"
		}
		return signin.Endpoint{}, fmt.Errorf("provider %s has no key: set %s (read now, at import time) or api_key in the user config", name, env)
	}
	return signin.Endpoint{BaseURL: p.BaseURL, WireAPI: p.WireAPI, Model: p.Model, APIKey: key.Reveal()}, nil
}
