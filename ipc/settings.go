package ipc

import (
	"time"

	"encoding/json"

	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/store"
)

// SessionSettings are the per-session options kept in the session's
// settings object in the store.
type SessionSettings struct {
	AllowedCommands   []string `json:"allowedCommands,omitempty"`
	ShellPolicy       string   `json:"shellPolicy,omitempty"`
	ApprovalTimeoutMS int64    `json:"approvalTimeoutMs,omitempty"`
	ReasoningEffort   string   `json:"reasoningEffort,omitempty"`
	Sandbox           string   `json:"sandbox,omitempty"`        // auto (default) | off | required
	SandboxNetwork    bool     `json:"sandboxNetwork,omitempty"` // sandboxed commands may use the network
	Lang              string   `json:"lang,omitempty"`           // zh | en | zh-TW | ja | ko | es; "" = the default (lang.go)
}

// sessionSettings decodes a session's settings; unknown or malformed members
// are ignored (other writers may add their own).
func sessionSettings(ss store.Session) SessionSettings {
	var set SessionSettings
	_ = json.Unmarshal(ss.Settings, &set) // best effort: a bad object means defaults
	return set
}

// withSettings returns the session's settings object with ours merged in,
// keeping members written by others.
func withSettings(raw json.RawMessage, set SessionSettings) json.RawMessage {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(raw, &obj) // a bad object is replaced
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	put := func(k string, v any, empty bool) {
		if empty {
			delete(obj, k)
			return
		}
		b, err := json.Marshal(v)
		if err == nil {
			obj[k] = b
		}
	}
	put("allowedCommands", set.AllowedCommands, set.AllowedCommands == nil)
	put("shellPolicy", set.ShellPolicy, set.ShellPolicy == "")
	put("approvalTimeoutMs", set.ApprovalTimeoutMS, set.ApprovalTimeoutMS == 0)
	put("reasoningEffort", set.ReasoningEffort, set.ReasoningEffort == "")
	put("sandbox", set.Sandbox, set.Sandbox == "")
	put("sandboxNetwork", set.SandboxNetwork, !set.SandboxNetwork)
	put("lang", set.Lang, set.Lang == "")
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

// sandboxConfig is the session's sandbox configuration; a stored mode that
// no longer parses is auto.
func (set SessionSettings) sandboxConfig() sandbox.Config {
	mode, err := sandbox.ParseMode(set.Sandbox)
	if err != nil {
		mode = sandbox.ModeAuto
	}
	return sandbox.Config{Mode: mode, Network: set.SandboxNetwork}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
