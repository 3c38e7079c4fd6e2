// Package prices is the model price table: USD per 1M input, cached input
// and output tokens, for the common OpenAI-compatible models, as a dated
// data file (prices.json, embedded). A model is priced only by its exact id
// (case aside): a snapshot or a variant that is not listed has no price,
// never its family's. Callers add the prices a provider's settings give
// (With).
//
// Concurrency: a Table is immutable; safe for concurrent use.
package prices

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

//go:embed prices.json
var defaultJSON []byte

// Price is a model's price in USD per 1M tokens.
type Price struct {
	Input float64 `json:"input"`
	// CachedInput is the price of the cached part of the input; nil: the
	// endpoint gives no discount (cached input costs Input).
	CachedInput *float64 `json:"cachedInput,omitempty"`
	Output      float64  `json:"output"`
}

// ErrBadPrice: a price is negative, not a number or absurdly high.
var ErrBadPrice = errors.New("bad price")

// maxPrice bounds a price per 1M tokens: above it a value is a typo (or a
// price per token), not a price.
const maxPrice = 10_000

// Check reports a price that cannot be one.
func (p Price) Check() error {
	vals := []float64{p.Input, p.Output}
	if p.CachedInput != nil {
		vals = append(vals, *p.CachedInput)
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxPrice {
			return fmt.Errorf("%w: %v USD per 1M tokens (0 to %d)", ErrBadPrice, v, maxPrice)
		}
	}
	return nil
}

// Cost is what u costs at p, in USD: the uncached input at Input, the
// cached input at CachedInput, the output (reasoning included) at Output.
func (p Price) Cost(u llm.Usage) float64 {
	cached := min(max(u.CachedTokens, 0), max(u.PromptTokens, 0))
	fresh := max(u.PromptTokens, 0) - cached
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	return (float64(fresh)*p.Input + float64(cached)*cachedPrice + float64(max(u.CompletionTokens, 0))*p.Output) / 1e6
}

// Table maps model ids to prices.
type Table struct {
	asOf   string
	models map[string]Price // by lower-case id
}

// Default is the embedded table.
func Default() *Table { return defaultTable }

var defaultTable = mustParse(defaultJSON)

func mustParse(b []byte) *Table {
	var f struct {
		AsOf   string           `json:"asOf"`
		Models map[string]Price `json:"models"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		panic("prices.json: " + err.Error())
	}
	t := &Table{asOf: f.AsOf, models: make(map[string]Price, len(f.Models))}
	for id, p := range f.Models {
		if err := p.Check(); err != nil {
			panic("prices.json: " + id + ": " + err.Error())
		}
		t.models[key(id)] = p
	}
	return t
}

func key(model string) string { return strings.ToLower(strings.TrimSpace(model)) }

// AsOf is the date (YYYY-MM-DD) the default prices were taken.
func (t *Table) AsOf() string { return t.asOf }

// Lookup returns the price of a model id, or false when it has none.
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	p, ok := t.models[key(model)]
	return p, ok
}

// With returns a table whose prices for the given models replace t's (a
// provider's own prices). Each must pass Check.
func (t *Table) With(overrides map[string]Price) (*Table, error) {
	out := &Table{asOf: t.asOf, models: make(map[string]Price, len(t.models)+len(overrides))}
	for id, p := range t.models {
		out.models[id] = p
	}
	for id, p := range overrides {
		if key(id) == "" {
			return nil, fmt.Errorf("%w: a price needs a model id", ErrBadPrice)
		}
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("price of %s: %w", id, err)
		}
		out.models[key(id)] = p
	}
	return out, nil
}
