package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/model"
)

// keySource says where the active profile's key comes from, for the error
// of a refused key; never the key itself.
func keySource(name string, p config.Provider) string {
	switch {
	case p.APIKey != "":
		return fmt.Sprintf("providers.%s.api_key (inline in the config)", name)
	case p.APIKeyEnv != "":
		return fmt.Sprintf("%s (providers.%s.api_key_env)", p.APIKeyEnv, name)
	}
	return ""
}

// Models is what `scv models` prints: the active profile, its endpoint,
// the configured model and the models the endpoint lists.
type Models struct {
	Provider string   `json:"provider"`
	WireAPI  string   `json:"wire_api"`
	BaseURL  string   `json:"base_url"`
	Current  string   `json:"current"`
	Models   []string `json:"models"`
}

// ListModels asks the active provider of cfg which models it serves (one
// bounded GET /models), with the key from this process's environment.
func (a *App) ListModels(ctx context.Context, cfg *config.Config) (Models, error) {
	name, prof := cfg.ActiveProvider()
	out := Models{Provider: name, WireAPI: prof.WireAPI, BaseURL: prof.BaseURL, Current: prof.Model}
	client, _, err := a.modelClient(cfg, a.opts.Env)
	if err != nil {
		return out, err
	}
	l, ok := client.(model.Lister)
	if !ok {
		return out, errors.New("this provider's client cannot list models")
	}
	out.Models, err = l.ListModels(ctx)
	return out, err
}
