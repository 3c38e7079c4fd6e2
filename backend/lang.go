package backend

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/oslocale"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// A session's language (seed lang: zh, en, zh-TW, ja, ko, es) selects its
// system prompt, its session naming and its compaction summaries. It is
// chosen at session.create {lang}, else the default — the shell's locale
// (initialize {locale}, the last one given), else the OS locale, else
// English — and kept in the session's settings, so a session keeps its
// language whatever later shells say. session.setLang changes it; the engine
// is rebuilt with it before the session's next turn. A locale without
// prompts (fr-FR) means English.

// langState holds the shell's locale and the OS locale.
type langState struct {
	mu    sync.Mutex // guards shell
	shell string     // the last initialize {locale}; "" = none given

	os func() string // the OS locale tag, looked up once
}

func newLangState(systemLocale func() string) langState {
	if systemLocale == nil {
		systemLocale = oslocale.Get
	}
	return langState{os: sync.OnceValue(systemLocale)}
}

// setShellLocale records the shell's locale (initialize {locale}).
func (b *Backend) setShellLocale(tag string) {
	b.lang.mu.Lock()
	b.lang.shell = tag
	b.lang.mu.Unlock()
}

// defaultLang is the language of a session that names none.
func (b *Backend) defaultLang() string {
	b.lang.mu.Lock()
	tag := b.lang.shell
	b.lang.mu.Unlock()
	if tag == "" {
		tag = b.lang.os()
	}
	if l, ok := engine.MatchLang(tag); ok {
		return l
	}
	return "en"
}

// sessionLang is the language a session runs in: its own, else the default.
func (b *Backend) sessionLang(ss store.Session) string {
	if l, ok := engine.MatchLang(sessionSettings(ss).Lang); ok {
		return l
	}
	return b.defaultLang()
}

// langOf is the language of a session by id (the default when it cannot
// be read): the language of the error and turn_end texts the host records.
func (b *Backend) langOf(sessionID string) string {
	ss, err := b.opts.Store.Session(context.WithoutCancel(b.ctx), sessionID)
	if err != nil {
		return b.defaultLang()
	}
	return b.sessionLang(ss)
}

// validLocale checks initialize's locale: a BCP 47 or POSIX tag
// ("ja-JP", "zh_TW.UTF-8"), any language.
func validLocale(tag string) error {
	if len(tag) > 64 || strings.Trim(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@") != "" {
		return protocol.InvalidField("locale", "must be a language tag such as en-US or zh_TW.UTF-8")
	}
	return nil
}

// parseLang checks a session's lang: a tag naming one of the six prompt
// languages; "" is the default.
func parseLang(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	l, ok := engine.MatchLang(tag)
	if !ok || len(tag) > 64 {
		return "", protocol.InvalidField("lang", "unsupported language "+quoteTrunc(tag)+"; one of "+strings.Join(engine.PromptLangs, ", "))
	}
	return l, nil
}

func quoteTrunc(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func (b *Backend) SetLang(ctx context.Context, p protocol.SessionSetLangParams) (protocol.Session, error) {
	lang, err := parseLang(p.Lang)
	if err != nil {
		return protocol.Session{}, err
	}
	if lang == "" {
		return protocol.Session{}, protocol.InvalidField("lang", "required")
	}
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		set := sessionSettings(*ss)
		set.Lang = lang
		ss.Settings = withSettings(ss.Settings, set)
	})
	if err != nil {
		return protocol.Session{}, err
	}
	// The language is in the prompt, the naming and the compactor: the
	// engine is rebuilt (history kept in the store) before the next turn.
	b.reloadEngine(p.SessionID)
	return b.sessionInfo(ctx, ss), nil
}
