package agent

import (
	"context"
	"errors"

	"github.com/scv-agent/scv/internal/model"
)

// ErrNoModelList says the session's model client cannot list models.
var ErrNoModelList = errors.New("the provider's client cannot list models")

// ListModels asks the session's provider for the models it offers.
func (s *Session) ListModels(ctx context.Context) ([]string, error) {
	l, ok := s.opts.Model.(model.Lister)
	if !ok {
		return nil, ErrNoModelList
	}
	ids, err := l.ListModels(ctx)
	if err != nil {
		return nil, modelFailure(err, s.secrets)
	}
	return ids, nil
}

// Configure sets the model and reasoning effort of the next turns ("" keeps
// either); a running turn keeps the ones it started with.
func (s *Session) Configure(modelName, effort string) (string, string) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	if modelName != "" {
		s.opts.ModelName = modelName
	}
	if effort != "" {
		s.opts.ReasoningEffort = effort
	}
	return s.opts.ModelName, s.opts.ReasoningEffort
}

// ModelName returns the model the next turn uses.
func (s *Session) ModelName() string {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.opts.ModelName
}

// turnModel returns the model and effort a starting turn keeps.
func (s *Session) turnModel() (string, string) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.opts.ModelName, s.opts.ReasoningEffort
}
