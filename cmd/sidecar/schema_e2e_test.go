package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/protocol/validate"
)

// frameValidator checks frames against protocol/schema.json.
var frameValidator = sync.OnceValues(validate.New)

// dialChecked dials the sidecar with every frame it sends checked against
// protocol/schema.json (client.Options.Check); the test fails, at its end,
// on each frame that violates it.
func dialChecked(t testing.TB, ctx context.Context, url, token string, opts *client.Options) (*client.Client, error) {
	t.Helper()
	v, err := frameValidator()
	require.NoError(t, err, "compile protocol/schema.json")
	var o client.Options
	if opts != nil {
		o = *opts
	}
	o.Check = v.Frame
	c, err := client.Dial(ctx, url, token, &o)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		for _, err := range c.Violations() {
			t.Errorf("a frame of the sidecar violates protocol/schema.json: %v", err)
		}
	})
	return c, nil
}

// TestInitializeVersions: initialize takes a version or a range and answers
// the one chosen; no overlap is -32602 with error.data naming the supported
// range; capabilities list the schema's methods and the features.
func TestInitializeVersions(t *testing.T) {
	p := spawn(t, t.TempDir())
	dial := func() *client.Client {
		c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	var res protocol.InitializeResult
	require.NoError(t, dial().Call(tctx(t), "initialize", map[string]any{"protocolVersion": map[string]int{"min": 1, "max": 7}}, &res))
	require.Equal(t, protocol.MaxVersion, res.ProtocolVersion, "the highest both speak")
	require.Equal(t, protocol.VersionRange{Min: protocol.MinVersion, Max: protocol.MaxVersion}, res.Capabilities.ProtocolVersions)
	var names []string
	for _, m := range protocol.Methods() {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	require.Equal(t, names, res.Capabilities.Methods, "routed methods vs the protocol package's")
	require.Contains(t, res.Capabilities.Features, protocol.FeatureMCPTrust)
	require.Contains(t, res.Capabilities.Features, protocol.FeatureTerminals)

	for _, v := range []any{7, map[string]int{"min": 2, "max": 3}} {
		err := dial().Call(tctx(t), "initialize", map[string]any{"protocolVersion": v}, nil)
		var we *client.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.Equal(t, client.CodeInvalidParams, we.Code)
		require.NotNil(t, we.Data)
		require.Equal(t, protocol.KindUnsupportedVersion, we.Data.Kind)
		require.Equal(t, "protocolVersion", we.Data.Field)
		require.Equal(t, &protocol.VersionRange{Min: 1, Max: 1}, we.Data.Supported)
	}
	for _, v := range []any{0, "1", map[string]int{"min": 2, "max": 1}, map[string]any{"min": 1, "max": 1, "x": 1}} {
		err := dial().Call(tctx(t), "initialize", map[string]any{"protocolVersion": v}, nil)
		require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v: %v", v, err)
		require.ErrorContains(t, err, "protocolVersion")
	}
}

// TestErrorData: every error carries error.data {kind, field?, expected?}
// besides its message (and the frame check holds every error to the schema).
func TestErrorData(t *testing.T) {
	p := spawn(t, t.TempDir())
	raw, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	wireErr := func(err error) *client.Error {
		t.Helper()
		var we *client.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.NotNil(t, we.Data, "%v", err)
		return we
	}
	we := wireErr(raw.Call(tctx(t), "session.list", map[string]any{}, nil))
	require.Equal(t, client.CodeNotInitialized, we.Code)
	require.Equal(t, protocol.KindNotInitialized, we.Data.Kind)

	c := p.connect(t)
	for _, tc := range []struct {
		method string
		params any
		code   int
		data   protocol.ErrorData
	}{
		{"session.get", map[string]any{}, client.CodeInvalidParams, protocol.ErrorData{Kind: protocol.KindRequired, Field: "sessionId"}},
		{"session.subscribe", map[string]any{"sessionId": "s", "afterSeq": "x"}, client.CodeInvalidParams, protocol.ErrorData{Kind: protocol.KindWrongType, Field: "afterSeq", Expected: "integer"}},
		{"session.subscribe", map[string]any{"sessionId": "s", "afterSeq": -1}, client.CodeInvalidParams, protocol.ErrorData{Kind: protocol.KindInvalidParams, Field: "afterSeq"}},
		{"session.get", map[string]any{"sessionId": "nope"}, client.CodeNotFound, protocol.ErrorData{Kind: protocol.KindNotFound}},
		{"session.party", map[string]any{}, client.CodeMethodNotFound, protocol.ErrorData{Kind: protocol.KindMethodNotFound}},
	} {
		we := wireErr(c.Call(tctx(t), tc.method, tc.params, nil))
		require.Equal(t, tc.code, we.Code, "%s %v", tc.method, we)
		require.Equal(t, tc.data, *we.Data, "%s %v", tc.method, we)
	}
}
