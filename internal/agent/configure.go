package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/catalog"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// ModelInfo is what a session knows of one model: the context window its
// turns budget for and its prices (nil: unknown, its turns carry no
// cost).
type ModelInfo struct {
	ContextWindow int
	Prices        *catalog.Prices
}

// describe is what the session knows of modelName; s.cfgMu is held.
func (s *Session) describe(modelName string) ModelInfo {
	var info ModelInfo
	if s.opts.Describe != nil {
		info = s.opts.Describe(modelName)
	}
	if info.ContextWindow <= 0 {
		info.ContextWindow = s.opts.Context.MaxTokens
	}
	return info
}

// ContextWindow is the context window of the next turn's model.
func (s *Session) ContextWindow() int {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.describe(s.opts.ModelName).ContextWindow
}

// SetEndpoint moves the session's next turns to another model client (a
// provider profile's), its model and effort, described by describe (nil:
// nothing known); a running turn keeps the client it started with.
func (s *Session) SetEndpoint(client model.Client, modelName, effort string, describe func(string) ModelInfo) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.opts.Model, s.opts.ModelName, s.opts.ReasoningEffort, s.opts.Describe = client, modelName, effort, describe
}

// turnSetup is what a starting turn keeps for its whole run.
type turnSetup struct {
	client model.Client
	model  string
	effort string
	info   ModelInfo
}

// turnModel returns what a starting turn keeps.
func (s *Session) turnModel() turnSetup {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return turnSetup{client: s.opts.Model, model: s.opts.ModelName, effort: s.opts.ReasoningEffort, info: s.describe(s.opts.ModelName)}
}

// cost prices u at the turn's model's prices; u unchanged when either is
// unknown.
func (t turnSetup) cost(u *proto.Usage) {
	if u == nil || t.info.Prices == nil {
		return
	}
	usd := catalog.Round(t.info.Prices.Cost(catalog.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens}))
	u.CostUSD = &usd
}

// ErrNoModelList says the session's model client cannot list models.
var ErrNoModelList = errors.New("the provider's client cannot list models")

// ListModels asks the session's provider for the models it offers.
func (s *Session) ListModels(ctx context.Context) ([]string, error) {
	s.cfgMu.Lock()
	client := s.opts.Model
	s.cfgMu.Unlock()
	l, ok := client.(model.Lister)
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
