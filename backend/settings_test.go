package backend

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zqagent/sidecar/protocol"
)

// TestWithSettingsKeepsOthersMembers: the stored object keeps what other
// writers put there, takes ours, and loses the members we emptied.
func TestWithSettingsKeepsOthersMembers(t *testing.T) {
	raw := json.RawMessage(`{"theirs":{"x":1},"shellPolicy":"strict","lang":"ko","sandboxNetwork":true}`)
	got := withSettings(raw, protocol.SessionSettings{AllowedCommands: []string{"ls"}, Lang: "ja"})
	require.JSONEq(t, `{"theirs":{"x":1},"allowedCommands":["ls"],"lang":"ja"}`, string(got))

	require.JSONEq(t, `{}`, string(withSettings(json.RawMessage(`not json`), protocol.SessionSettings{})))
	require.Len(t, settingsKeys(), 7, "every member of protocol.SessionSettings: %v", settingsKeys())
}
