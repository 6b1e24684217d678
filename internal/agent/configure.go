package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/scv-agent/scv/internal/approval"
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

// Policy returns the approval policy the session's next calls are decided
// by.
func (s *Session) Policy() approval.Policy {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.opts.Policy
}

// SetPolicy changes the approval policy of the session's next calls (a
// call already deciding keeps its policy). A policy weaker than the one
// the session was built with (its configuration's) is refused: a client
// may make a session stricter, or return it to its configured policy,
// never loosen what the configuration demands.
func (s *Session) SetPolicy(p approval.Policy) error {
	if approval.Rank(p) < approval.Rank(s.floor) {
		return fmt.Errorf("approval policy %s is weaker than %s, which the configuration sets for this session (ask-on-risk < ask-always < deny-on-risk)", p, s.floor)
	}
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.opts.Policy = p
	return nil
}

// MinPolicy is the weakest policy SetPolicy accepts: the one the session
// was built with.
func (s *Session) MinPolicy() approval.Policy { return s.floor }
