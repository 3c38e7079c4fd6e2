package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/store"
)

// mcpTrust keeps one project's MCP approvals (server name → approved config
// hash) in the sidecar's database, under the setting "mcp.trust/<projectId>":
// in the data dir, never in the project, so a repository cannot approve its
// own servers. Writes are serialized by the project's mcp.Manager (its
// trust lock), so the read-modify-write below never races itself.
// mcpTrustWriteTimeout bounds the write of an approval, which runs even
// when the request that asked for it is cancelled.
const mcpTrustWriteTimeout = 5 * time.Second

type mcpTrust struct {
	st        *store.Store
	projectID string
}

var _ mcp.TrustStore = (*mcpTrust)(nil)

func (t *mcpTrust) key() string { return "mcp.trust/" + t.projectID }

// Approvals implements mcp.TrustStore.
func (t *mcpTrust) Approvals(ctx context.Context) (map[string]string, error) {
	raw, err := t.st.Setting(ctx, t.key())
	if errors.Is(err, store.ErrNotFound) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP approvals: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("read MCP approvals: %w", err)
	}
	return m, nil
}

// SetApproval implements mcp.TrustStore.
func (t *mcpTrust) SetApproval(ctx context.Context, server, hash string) error {
	cur, err := t.Approvals(ctx)
	if err != nil {
		return err
	}
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]string{}
	}
	if hash == "" {
		delete(next, server)
	} else {
		next[server] = hash
	}
	if maps.Equal(cur, next) {
		return nil
	}
	var raw json.RawMessage
	if len(next) > 0 {
		if raw, err = json.Marshal(next); err != nil {
			return fmt.Errorf("save MCP approvals: %w", err)
		}
	}
	// A cancelled request must not leave the approval half recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpTrustWriteTimeout)
	defer cancel()
	if err := t.st.SetSetting(ctx, t.key(), raw); err != nil {
		return fmt.Errorf("save MCP approvals: %w", err)
	}
	return nil
}
