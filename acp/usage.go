package acp

import (
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/protocol"
)

// usageCurrency is the currency of every cost the sidecar reports (its
// price tables are in USD).
const usageCurrency = "USD"

// usageUpdates maps a usage event (one model response's usage, with the
// session's totals) to ACP's usage_update (unstable in ACP): used and size
// are the session's context fill (the count compaction uses against the
// model's window), cost the session's cost so far. A response whose
// model's window is unknown has no fill: no update (ACP's size is not
// optional, and a guess would mislead a context gauge). A cost is sent
// only when known: never for a session that counted a response without a
// price.
func usageUpdates(raw json.RawMessage) ([]sdk.SessionUpdate, error) {
	var d protocol.UsageData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	if d.Context == nil || d.Context.Window <= 0 {
		return nil, nil
	}
	u := &sdk.SessionUsageUpdate{Used: d.Context.Tokens, Size: d.Context.Window}
	if d.Cost != nil && d.Cost.Session != nil {
		u.Cost = &sdk.Cost{Amount: *d.Cost.Session, Currency: usageCurrency}
	}
	return []sdk.SessionUpdate{{UsageUpdate: u}}, nil
}
