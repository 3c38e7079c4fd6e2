package host

import (
	"context"
	"strings"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm/openai"
	"github.com/zqagent/sidecar/store"
)

// namingTimeout bounds the model call that names a session.
const namingTimeout = 30 * time.Second

// maybeName names a session after its first completed turn when it has no
// title yet, and records session_named {source: auto}. Only a real model
// names sessions; scripted and demo providers leave the title empty. It runs
// on its own goroutine (owned by the server) so the turn queue never waits.
func (h *Session) maybeName(eng *engine.Engine) {
	if _, real := eng.Provider().(*openai.Provider); !real {
		return
	}
	h.s.wg.Go(func() {
		ctx, cancel := context.WithTimeout(h.s.bg, namingTimeout)
		defer cancel()
		st := h.s.opts.Store
		ss, err := st.Session(ctx, h.id)
		if err != nil || ss.Title != "" || ss.TitleSource != "auto" {
			return
		}
		name, err := eng.GenerateName(ctx)
		name = strings.TrimSpace(name)
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
		h.RecordSessionEvent(engine.Event{Type: engine.EventSessionNamed, Data: engine.SessionNamedData{Name: name, Source: "auto"}})
	})
}
