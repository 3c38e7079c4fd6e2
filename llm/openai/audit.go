package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/llm"
)

// auditRecord is one request's audit file.
type auditRecord struct {
	ReqID      string            `json:"reqId"`
	Call       string            `json:"call"` // stream | chat
	StartedAt  time.Time         `json:"startedAt"`
	DurationMS int64             `json:"durationMs"`
	BaseURL    string            `json:"baseUrl"`
	Model      string            `json:"model"`
	Headers    map[string]string `json:"headers"`
	Attempts   []auditAttempt    `json:"attempts"`
	Response   *auditResponse    `json:"response,omitempty"`
	Error      string            `json:"error,omitempty"`
}

type auditAttempt struct {
	API      string `json:"api"` // responses | chat
	Request  any    `json:"request"`
	Error    string `json:"error,omitempty"`
	Fallback string `json:"fallback,omitempty"` // why the next attempt used chat
}

type auditResponse struct {
	Content      string         `json:"content,omitempty"`
	Reasoning    string         `json:"reasoning,omitempty"`
	ToolCalls    []llm.ToolCall `json:"toolCalls,omitempty"`
	Usage        *llm.Usage     `json:"usage,omitempty"`
	FinishReason string         `json:"finishReason,omitempty"`
}

func (p *Provider) newAudit(call, reqID, model string) *auditRecord {
	if p.opts.LogDir == "" {
		return nil
	}
	h := map[string]string{"Authorization": "Bearer [redacted]"}
	for k, v := range p.opts.Headers {
		if secretHeader(k) {
			v = "[redacted]"
		}
		h[k] = v
	}
	return &auditRecord{ReqID: reqID, Call: call, StartedAt: time.Now().UTC(), BaseURL: p.opts.BaseURL, Model: model, Headers: h}
}

func secretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func (r *auditRecord) attempt(api string, wire any) *auditAttempt {
	if r == nil {
		return nil
	}
	r.Attempts = append(r.Attempts, auditAttempt{API: api, Request: wire})
	return &r.Attempts[len(r.Attempts)-1]
}

func (r *auditRecord) failed(api string, err error, fallback string) {
	if r == nil || len(r.Attempts) == 0 {
		return
	}
	a := &r.Attempts[len(r.Attempts)-1]
	if a.API == api && err != nil {
		a.Error = err.Error()
		a.Fallback = fallback
	}
}

// dataURLPayload matches inline media; the log keeps their size only.
var dataURLPayload = regexp.MustCompile(`data:([a-zA-Z0-9.+/-]+);base64,[A-Za-z0-9+/=]{64,}`)

// write stores the record under dir/YYYY-MM-DD/<reqId>.json. Keys are
// redacted from the whole text; inline media are shortened.
func (r *auditRecord) write(dir string, resp *auditResponse, err error, key string) error {
	if r == nil {
		return nil
	}
	r.DurationMS = time.Since(r.StartedAt).Milliseconds()
	r.Response = resp
	if err != nil {
		r.Error = err.Error()
	}
	b, mErr := json.MarshalIndent(r, "", "  ")
	if mErr != nil {
		return fmt.Errorf("audit: %w", mErr)
	}
	text := dataURLPayload.ReplaceAllStringFunc(string(b), func(m string) string {
		head, payload, _ := strings.Cut(m, ",")
		return fmt.Sprintf("%s,<%d base64 chars>", head, len(payload))
	})
	text = redact(text, key)
	day := filepath.Join(dir, r.StartedAt.Format("2006-01-02"))
	if err := os.MkdirAll(day, 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	name := safeName(r.ReqID)
	for i := 0; i < 100; i++ {
		path := filepath.Join(day, name+".json")
		if i > 0 {
			path = filepath.Join(day, fmt.Sprintf("%s-%d.json", name, i))
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		_, wErr := f.WriteString(text)
		if cErr := f.Close(); wErr == nil {
			wErr = cErr
		}
		if wErr != nil {
			return fmt.Errorf("audit: %w", wErr)
		}
		return nil
	}
	return fmt.Errorf("audit: too many files named %s", name)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(reqID string) string {
	n := strings.Trim(unsafeName.ReplaceAllString(reqID, "_"), "._")
	if n == "" {
		n = uuid.NewString()
	}
	if len(n) > 100 {
		n = n[:100]
	}
	return n
}
