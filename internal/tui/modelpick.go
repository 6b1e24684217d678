package tui

import (
	"fmt"

	"github.com/scv-agent/scv/internal/proto"
)

// /model (docs/tui.md): a picker over the models of the session's
// provider profile and, below them, the other configured profiles; a
// profile row lists that profile's models, and picking one of them moves
// the session there (session.configure with provider). `/model NAME
// [effort]` switches the model within the profile, `/model -p PROFILE
// [NAME]` moves to a profile (its configured model unless NAME).

// modelUsage is shown when the models cannot be listed or /model is
// misused.
const modelUsage = "usage: /model NAME [effort] switches the model for the next turns (effort: none, minimal, low, medium or high, where the provider has it); /model -p PROFILE [NAME] moves the session to another provider profile; /model alone lists the models and profiles"

// modelCommand lists the models (no argument), switches to the one named,
// or moves the session to a profile (-p).
func (m *Model) modelCommand(args []string) {
	if m.conn != connected {
		m.addItem(&item{kind: kindError, text: "not connected; the model cannot be changed"})
		return
	}
	if len(args) > 0 && args[0] == "-p" {
		if len(args) < 2 || len(args) > 3 {
			m.addItem(&item{kind: kindError, text: modelUsage})
			return
		}
		c := proto.SessionConfigure{Provider: args[1]}
		if len(args) == 3 {
			c.Model = args[2]
		}
		m.configure(c)
		return
	}
	if len(args) > 2 {
		m.addItem(&item{kind: kindError, text: modelUsage})
		return
	}
	if len(args) == 0 {
		m.listModels("")
		return
	}
	c := proto.SessionConfigure{Model: args[0]}
	if len(args) == 2 {
		c.ReasoningEffort = args[1]
	}
	m.configure(c)
}

// configure sends c for the session as the request whose answer the
// model command waits for.
func (m *Model) configure(c proto.SessionConfigure) {
	c.RequestID = m.nextRequestID()
	c.SessionID = m.session.SessionID
	m.configureReq = c.RequestID
	m.sendMsg(&c)
}

// listModels asks for the models of profile ("" for the session's own).
func (m *Model) listModels(profile string) {
	m.modelsReq, m.listing = m.nextRequestID(), profile
	m.sendMsg(&proto.ModelsList{Envelope: proto.Envelope{RequestID: m.modelsReq}, SessionID: m.session.SessionID, Provider: profile})
}

// openModels shows the models.listed answer as a picker: the models of
// the profile asked about and, for the session's own, a row per other
// configured profile.
func (m *Model) openModels(e *proto.ModelsListed) {
	m.modelsReq = ""
	other := m.listing != ""
	m.listing = ""
	if !other && len(e.Profiles) > 0 {
		m.profiles = e.Profiles
	}
	p := &picker{mode: pickModel}
	var rows []pickRow
	if other {
		p.profile = e.Provider
		def := m.profileDefault(e.Provider)
		if def != "" && !contains(e.Models, def) {
			rows = append(rows, pickRow{id: def, title: def, meta: "the profile's model", profile: e.Provider})
		}
		for _, name := range e.Models {
			r := pickRow{id: name, title: name, profile: e.Provider}
			if name == def {
				r.meta = "the profile's model"
			}
			rows = append(rows, r)
		}
	} else {
		for i, name := range e.Models {
			r := pickRow{id: name, title: name, current: name == e.Current}
			if r.current {
				r.meta = "current"
				p.cursor = i
			}
			rows = append(rows, r)
		}
		for _, pr := range e.Profiles {
			if pr.Name == e.Provider {
				continue
			}
			rows = append(rows, pickRow{id: pr.Name, title: "⇄ profile " + pr.Name + " · " + pr.Model, meta: pr.BaseURL, profile: pr.Name, profileRow: true})
			p.others = true
		}
	}
	if len(rows) == 0 {
		m.addItem(&item{kind: kindNotice, text: "the provider lists no models; " + modelUsage})
		return
	}
	p.setRows(rows)
	m.picker = p
}

// profileDefault is the configured model of profile name, "" when unknown.
func (m *Model) profileDefault(name string) string {
	for _, p := range m.profiles {
		if p.Name == name {
			return p.Model
		}
	}
	return ""
}

// profileListFailed handles a refused listing of another profile's
// models: its configured model is still offered.
func (m *Model) profileListFailed(e *proto.Error) {
	name := m.listing
	m.modelsReq, m.listing = "", ""
	def := m.profileDefault(name)
	if def == "" {
		m.addItem(&item{kind: kindError, text: fmt.Sprintf("could not list the models of profile %s (%s): %s", name, e.Code, e.Message)})
		return
	}
	p := &picker{mode: pickModel, profile: name, status: fmt.Sprintf("its models could not be listed (%s): %s", e.Code, e.Message)}
	p.setRows([]pickRow{{id: def, title: def, meta: "the profile's model", profile: name}})
	m.picker = p
}

// pickModelRow acts on a row of the model picker.
func (m *Model) pickModelRow(r pickRow) {
	m.picker = nil
	switch {
	case r.profileRow:
		m.listModels(r.profile)
	case r.profile != "":
		m.modelCommand([]string{"-p", r.profile, r.id})
	case !r.current:
		m.modelCommand([]string{r.id})
	}
}

// configured shows the session.configured answer: the status line takes
// the new model and its context window; a move to another endpoint is
// said first.
func (m *Model) configured(e *proto.SessionConfigured) {
	m.configureReq = ""
	m.session.Model, m.session.ContextMaxTokens = e.Model, e.ContextMaxTokens
	if e.PreviousBaseURL != "" {
		m.addItem(&item{kind: kindNotice, text: fmt.Sprintf("endpoint changed: %s → %s", e.PreviousBaseURL, e.BaseURL)})
	}
	text := "model: " + orDash(e.Model)
	if e.Provider != "" {
		text = "profile " + e.Provider + " · " + text
	}
	if e.ReasoningEffort != "" {
		text += " · reasoning effort " + e.ReasoningEffort
	}
	text += fmt.Sprintf(" · context window %s tokens · used from the next turn", tokens(e.ContextMaxTokens))
	m.addItem(&item{kind: kindNotice, text: text})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
