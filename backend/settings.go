package backend

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/store"
)

// sessionSettings decodes a session's settings (protocol.SessionSettings:
// the wire's shape is the stored one); unknown or malformed members are
// ignored (other writers may add their own).
func sessionSettings(ss store.Session) protocol.SessionSettings {
	var set protocol.SessionSettings
	_ = json.Unmarshal(ss.Settings, &set) // best effort: a bad object means defaults
	return set
}

// settingsKeys are the members of protocol.SessionSettings, by JSON name.
var settingsKeys = sync.OnceValue(func() []string {
	var keys []string
	t := reflect.TypeFor[protocol.SessionSettings]()
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
})

// withSettings returns the session's settings object with ours merged in,
// keeping members written by others; a member of ours that is empty is
// removed.
func withSettings(raw json.RawMessage, set protocol.SessionSettings) json.RawMessage {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(raw, &obj) // a bad object is replaced
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	for _, k := range settingsKeys() {
		delete(obj, k)
	}
	ours, err := json.Marshal(set) // every member is omitempty: only the set ones
	if err != nil {
		return raw
	}
	if err := json.Unmarshal(ours, &obj); err != nil {
		return raw
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return b
}

// sandboxConfig is the session's sandbox configuration; a stored mode that
// no longer parses is auto.
func sandboxConfig(set protocol.SessionSettings) sandbox.Config {
	mode, err := sandbox.ParseMode(set.Sandbox)
	if err != nil {
		mode = sandbox.ModeAuto
	}
	return sandbox.Config{Mode: mode, Network: set.SandboxNetwork}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
