package backend

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm/prices"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// pricesTimeout bounds the read of a profile's prices at a model response.
const pricesTimeout = 5 * time.Second

// priceBook caches each provider profile's price table: the default table
// with the profile's own prices over it. profileChanged forgets a
// profile's, so providers.set applies from the next model response on.
type priceBook struct {
	mu     sync.Mutex               // guards tables
	tables map[string]*prices.Table // by profile name
}

func (p *priceBook) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tables, name)
}

// table returns a profile's table, reading the profile on a miss. A
// profile that cannot be read prices with the default table (not cached).
func (p *priceBook) table(b *Backend, name string) *prices.Table {
	p.mu.Lock()
	t, ok := p.tables[name]
	p.mu.Unlock()
	if ok {
		return t
	}
	ctx, cancel := context.WithTimeout(context.Background(), pricesTimeout)
	defer cancel()
	prof, err := b.profile(ctx, name)
	if err != nil {
		return prices.Default()
	}
	t, err = prices.Default().With(prof.Prices)
	if err != nil { // the store checked them: a broken row prices nothing of its own
		b.log.Warn("provider prices", "profile", name, "err", err)
		t = prices.Default()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tables == nil {
		p.tables = map[string]*prices.Table{}
	}
	p.tables[name] = t
	return t
}

// profilePrices prices a session's model responses with its profile's
// prices as they are at each response.
type profilePrices struct {
	b       *Backend
	profile string
}

var _ engine.PriceLookup = profilePrices{}

func (p profilePrices) Lookup(model string) (prices.Price, bool) {
	return p.b.prices.table(p.b, p.profile).Lookup(model)
}

// storedUsage is the session's stored usage totals for its engine (nil for
// a session that has none yet, or whose stored totals cannot be read:
// they start again, logged).
func storedUsage(log *slog.Logger, ss store.Session) *protocol.SessionUsage {
	if len(ss.Usage) == 0 {
		return nil
	}
	var u protocol.SessionUsage
	if err := json.Unmarshal(ss.Usage, &u); err != nil {
		log.Warn("session usage unreadable; it starts again", "session", ss.ID, "err", err)
		return nil
	}
	return &u
}

// sessionUsageOf is what a usage event (its recorded data) makes the
// session's usage totals, and their order (the event's request count).
func sessionUsageOf(data []byte) (json.RawMessage, int64) {
	var d protocol.UsageData
	if err := json.Unmarshal(data, &d); err != nil || d.Requests <= 0 {
		return nil, 0
	}
	u := protocol.SessionUsage{Tokens: d.Session, Requests: d.Requests}
	if d.Cost != nil {
		u.Cost = d.Cost.Session
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, 0
	}
	return b, d.Requests
}

// sessionUsageInfo is the session object's usage (nil before any).
func sessionUsageInfo(ss store.Session) *protocol.SessionUsage {
	if len(ss.Usage) == 0 {
		return nil
	}
	var u protocol.SessionUsage
	if json.Unmarshal(ss.Usage, &u) != nil {
		return nil
	}
	return &u
}

// wirePrices is a profile's prices on the wire (nil when none).
func wirePrices(in map[string]prices.Price) map[string]protocol.ModelPrice {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]protocol.ModelPrice, len(in))
	for m, p := range in {
		out[m] = protocol.ModelPrice{Input: p.Input, CachedInput: p.CachedInput, Output: p.Output}
	}
	return out
}

// storePrices checks providers.set's prices (-32602 naming the bad one).
func storePrices(in map[string]protocol.ModelPrice) (map[string]prices.Price, error) {
	if len(in) > store.MaxPrices {
		return nil, protocol.InvalidField("prices", "at most 1000 models")
	}
	out := make(map[string]prices.Price, len(in))
	for m, p := range in {
		pr := prices.Price{Input: p.Input, CachedInput: p.CachedInput, Output: p.Output}
		if m == "" || len(m) > 256 {
			return nil, protocol.InvalidField("prices", "a model id must be 1 to 256 characters")
		}
		if err := pr.Check(); err != nil {
			return nil, protocol.InvalidField("prices."+m, err.Error())
		}
		out[m] = pr
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
