package app

import (
	"context"
	"time"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// acpPool is the process's pool of running ACP adapters (transport =
// "acp"), one per open conversation, stopped by Close.
func (a *App) acpPool(cfg *config.Config) *agents.ACPPool {
	a.convMu.Lock()
	defer a.convMu.Unlock()
	if a.acp == nil {
		a.acp = agents.NewACPPool(cfg.Agent.MaxConversations, time.Duration(cfg.Agent.ConversationIdleSeconds)*time.Second)
	}
	return a.acp
}

// conversations is the process's registry of conversations with delegated
// agents, kept in st (in memory when nil), with the bounds of cfg. One
// registry per store, shared by every session this app builds: it holds
// which conversations have a call running.
func (a *App) conversations(cfg *config.Config, st *store.Store) *delegation.Registry {
	a.convMu.Lock()
	defer a.convMu.Unlock()
	if a.convs == nil {
		a.convs = map[*store.Store]*delegation.Registry{}
	}
	r := a.convs[st]
	if r == nil {
		var backing delegation.ConversationStore
		if st != nil {
			backing = storeConversations{st}
		}
		r = delegation.NewRegistry(delegation.RegistryOptions{Store: backing})
		a.convs[st] = r
	}
	return r.WithLimits(cfg.Agent.MaxConversations, time.Duration(cfg.Agent.ConversationIdleSeconds)*time.Second)
}

// storeConversations keeps conversations in the session database.
type storeConversations struct{ st *store.Store }

func (s storeConversations) Conversations(ctx context.Context, session string) ([]delegation.Conversation, error) {
	list, err := s.st.AgentConversations(ctx, session)
	if err != nil {
		return nil, err
	}
	out := make([]delegation.Conversation, len(list))
	for i, c := range list {
		out[i] = delegation.Conversation{Session: c.SessionID, Handle: c.Handle, N: c.N, Agent: c.Agent, Cwd: c.Cwd, VendorID: c.VendorID,
			Turns: c.Turns, Created: c.Created, Used: c.Used, Closed: c.Closed, ClosedWhy: c.ClosedWhy}
	}
	return out, nil
}

func (s storeConversations) PutConversation(ctx context.Context, c delegation.Conversation) error {
	return s.st.PutAgentConversation(ctx, store.AgentConversation{SessionID: c.Session, Handle: c.Handle, N: c.N, Agent: c.Agent, Cwd: c.Cwd,
		VendorID: c.VendorID, Turns: c.Turns, Created: c.Created, Used: c.Used, Closed: c.Closed, ClosedWhy: c.ClosedWhy})
}

// Conversations lists the conversations with delegated agents stored in
// st for session (every session's when ""), as `scv agents conversations`
// shows them.
func (a *App) Conversations(ctx context.Context, st *store.Store, session string) ([]delegation.Conversation, error) {
	loaded, err := a.LoadConfig("", NoOverrides)
	if err != nil {
		return nil, err
	}
	return a.conversations(&loaded.Config, st).List(ctx, session)
}
