package backend

import (
	"context"
	"strings"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// namingTimeout bounds the model call that names a session.
const namingTimeout = 30 * time.Second

// maybeName names a session after its first completed turn when it has no
// title yet, and records session_named {source: auto}, in the session's
// language. A real model names sessions, and so does the demo (in its
// language: the provider says so with NamesSessions); a script leaves the
// title empty. It runs on its own goroutine (owned by the server) so the
// turn queue never waits.
func (h *Session) maybeName(eng *engine.Engine) {
	if !namesSessions(eng.Provider()) || h.titled.Load() {
		return
	}
	h.s.wg.Go(func() {
		ctx, cancel := context.WithTimeout(h.s.bg, namingTimeout)
		defer cancel()
		st := h.s.opts.Store
		ss, err := st.Session(ctx, h.id)
		if err != nil {
			return
		}
		if ss.Title != "" || ss.TitleSource != "auto" {
			h.titled.Store(true) // a title never goes back to automatic: no more reads
			return
		}
		naming, err := eng.GenerateName(ctx)
		for _, ev := range naming.Events { // the title's usage counts, named or not
			h.RecordSessionEvent(ev)
		}
		name := strings.TrimSpace(naming.Name)
		if err != nil || name == "" {
			if err != nil {
				h.s.log.Info("name session", "session", h.id, "err", err)
			}
			return
		}
		named := false
		_, err = st.UpdateSession(ctx, h.id, func(s *store.Session) {
			if s.Title == "" && s.TitleSource == "auto" {
				s.Title, named = name, true
			}
		})
		if err != nil || !named {
			return
		}
		h.titled.Store(true)
		h.RecordSessionEvent(engine.Event{Type: protocol.EventSessionNamed, Data: protocol.SessionNamedData{Name: name, Source: "auto"}})
	})
}

// namesSessions reports whether sessions of a provider are named (it says
// so, llm.SessionNamer: the backend asserts no concrete provider).
func namesSessions(p llm.Provider) bool {
	n, ok := p.(llm.SessionNamer)
	return ok && n.NamesSessions()
}
