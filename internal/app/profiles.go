package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/catalog"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// Model metadata and moving a session between provider profiles
// (docs/model.md, "Model catalogue and cost"; docs/tui.md, /model).

// describer says what is known of a model of the active profile of l:
// its context window — the profile's [models.<id>] context_window, else
// context.max_tokens when a configuration sets it, else the catalogue's,
// else context.max_tokens' default — and its prices (the profile's
// [models.<id>] prices, else the catalogue's at the profile's base URL).
func (a *App) describer(l *config.Loaded) func(string) agent.ModelInfo {
	cfg := &l.Config
	_, prof := cfg.ActiveProvider()
	explicit := l.Origin("context.max_tokens") != config.LayerDefault
	fallback := cfg.Context.MaxTokens
	return func(name string) agent.ModelInfo {
		var over *catalog.Override
		if mi, ok := prof.Models[name]; ok {
			over = &catalog.Override{ContextWindow: mi.ContextWindow}
			if mi.InputPrice > 0 || mi.OutputPrice > 0 || mi.CacheReadPrice > 0 || mi.CacheWritePrice > 0 {
				over.Prices = &catalog.Prices{Input: mi.InputPrice, Output: mi.OutputPrice, CacheRead: mi.CacheReadPrice, CacheWrite: mi.CacheWritePrice}
			}
		}
		m, _ := a.catalog.Lookup(prof.BaseURL, name, over)
		info := agent.ModelInfo{ContextWindow: fallback, Prices: m.Prices}
		switch {
		case over != nil && over.ContextWindow > 0:
			info.ContextWindow = over.ContextWindow
		case !explicit && m.ContextWindow > 0:
			info.ContextWindow = m.ContextWindow
		}
		return info
	}
}

// profileClient builds the model client of profile name for a session in
// workspace started by req, with model ("" for the profile's): the key is
// the one sessionKey gives for that profile's endpoint, so a key is sent
// only to the endpoint it is for.
func (a *App) profileClient(workspace, name, modelName string, req proto.SessionStart) (*config.Loaded, model.Client, error) {
	over := config.Overrides{Provider: name, Model: modelName}
	l, err := a.LoadConfig(workspace, over)
	if err != nil {
		return nil, nil, err
	}
	env, err := a.sessionKey(&l.Config, workspace, over, req)
	if err != nil {
		return nil, nil, err
	}
	if env == nil {
		env = a.opts.Env
	}
	client, _, err := a.modelClient(&l.Config, env)
	return l, client, err
}

// switcher is SessionInfo.Switch of a session in workspace started by req.
func (a *App) switcher(workspace string, req proto.SessionStart) func(context.Context, string, string) (server.Switched, error) {
	return func(_ context.Context, name, modelName string) (server.Switched, error) {
		if err := validProfile(a, workspace, name); err != nil {
			return server.Switched{}, err
		}
		l, client, err := a.profileClient(workspace, name, modelName, req)
		if err != nil {
			return server.Switched{}, err
		}
		_, prof := l.Config.ActiveProvider()
		return server.Switched{
			Endpoint: server.Endpoint{Provider: name, WireAPI: prof.WireAPI, BaseURL: prof.BaseURL, Model: prof.Model},
			Client:   client, Effort: prof.ReasoningEffort, Describe: a.describer(l),
		}, nil
	}
}

// validProfile refuses a profile the configuration does not define,
// naming those it does.
func validProfile(a *App, workspace, name string) error {
	l, err := a.LoadConfig(workspace, config.Overrides{})
	if err != nil {
		return err
	}
	if _, ok := l.Config.Providers[name]; ok {
		return nil
	}
	return fmt.Errorf("no provider profile %q in the configuration; configured: %v", name, profileNames(&l.Config))
}

func profileNames(cfg *config.Config) []string {
	var names []string
	for n := range cfg.Providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// profiles is SessionInfo.Profiles of a session in workspace: every
// configured profile with its endpoint and model, sorted by name. It
// makes no request.
func (a *App) profiles(workspace string) func() []proto.Profile {
	return func() []proto.Profile {
		l, err := a.LoadConfig(workspace, config.Overrides{})
		if err != nil {
			return nil
		}
		var out []proto.Profile
		for _, name := range profileNames(&l.Config) {
			p := l.Config.Providers[name]
			out = append(out, proto.Profile{Name: name, WireAPI: p.WireAPI, BaseURL: p.BaseURL, Model: p.Model})
		}
		return out
	}
}

// profileLister is SessionInfo.ListProfile of a session in workspace
// started by req: one bounded GET /models at the profile's endpoint, with
// the key for that endpoint (a profile without one is not asked; the
// error names the variable to set).
func (a *App) profileLister(workspace string, req proto.SessionStart) func(context.Context, string) ([]string, error) {
	return func(ctx context.Context, name string) ([]string, error) {
		if err := validProfile(a, workspace, name); err != nil {
			return nil, err
		}
		_, client, err := a.profileClient(workspace, name, "", req)
		if err != nil {
			return nil, err
		}
		lst, ok := client.(model.Lister)
		if !ok {
			return nil, agent.ErrNoModelList
		}
		return lst.ListModels(ctx)
	}
}
