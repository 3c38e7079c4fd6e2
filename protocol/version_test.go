package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

func TestVersionSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want protocol.VersionSpec
		ok   bool
	}{
		{`1`, protocol.Exactly(1), true},
		{`{"min":1,"max":3}`, protocol.VersionSpec{Min: 1, Max: 3}, true},
		{`0`, protocol.VersionSpec{}, false},
		{`"1"`, protocol.VersionSpec{}, false},
		{`1.5`, protocol.VersionSpec{}, false},
		{`{"min":2,"max":1}`, protocol.VersionSpec{}, false},
		{`{"min":1}`, protocol.VersionSpec{}, false},
		{`{"min":1,"max":2,"x":0}`, protocol.VersionSpec{}, false},
	} {
		var v protocol.VersionSpec
		err := json.Unmarshal([]byte(tc.in), &v)
		if !tc.ok {
			var fe *protocol.FieldError
			require.ErrorAs(t, err, &fe, tc.in)
			require.Equal(t, "protocolVersion", fe.Field)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, v)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.JSONEq(t, tc.in, string(b), "round trip")
	}
	got, ok := protocol.VersionSpec{Min: 1, Max: 5}.Choose(1, 2)
	require.True(t, ok)
	require.Equal(t, 2, got, "the highest both speak")
	_, ok = protocol.VersionSpec{Min: 3, Max: 5}.Choose(1, 2)
	require.False(t, ok)
}

func TestDecodeData(t *testing.T) {
	ev := protocol.SessionEvent{Type: string(protocol.EventTurnEnd), Data: json.RawMessage(`{"taskId":"t","status":"completed","iterations":2,"produced_files":["a"]}`)}
	d, err := ev.Decode()
	require.NoError(t, err)
	require.Equal(t, protocol.TurnEndData{TaskID: "t", Status: protocol.TurnCompleted, Iterations: 2, ProducedFiles: []string{"a"}}, d)
	_, err = protocol.DecodeData("turn_party", nil)
	require.Error(t, err)
}
