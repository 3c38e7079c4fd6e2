package compaction

import (
	"github.com/zqagent/sidecar/engine/models"
	"github.com/zqagent/sidecar/llm"
)

// Counting without the codec. Building the o200k codec takes ~25 ms of CPU
// and ~12 MB of memory, so a process pays it only when a history may be
// near a threshold: a BPE token covers at least one byte, so a history's
// byte size (plus framing, scaled by the family factor) bounds its count
// from above. While that bound is below the soft threshold, no decision
// depends on the exact count and the count shown is the usual 4-bytes-a-
// token estimate.

// factorOf is the family factor of a model (1 for an exact tokenizer).
func factorOf(model string) float64 {
	caps := models.Lookup(model)
	if caps.Tokenizer == "o200k_base" {
		return 1
	}
	if f, ok := familyFactor[caps.Family]; ok {
		return f
	}
	return familyFactor["unknown"]
}

// byteBound returns an upper bound of the raw BPE count of msgs (no more
// tokens than bytes) and the quick estimate of it (4 bytes a token).
func byteBound(msgs []llm.Message) (bound, quick int) {
	bound, quick = 3, 3
	add := func(s string) {
		bound += len(s)
		quick += (len(s) + 3) / 4
	}
	for _, m := range msgs {
		bound += perMessage
		quick += perMessage
		add(m.Content)
		for _, tc := range m.ToolCalls {
			bound += perMessage
			quick += perMessage
			add(tc.Name)
			add(tc.Arguments)
		}
		bound += perImage * len(m.Attachments)
		quick += perImage * len(m.Attachments)
	}
	return bound, quick
}

// boundedCount is Count without the codec: it reports ok only when the
// count is certainly below limit, with the quick estimate as the count.
func (m *Manager) boundedCount(req Request, limit int) (tokens int, estimated, ok bool) {
	f := factorOf(req.Model)
	scale := func(n int) int { return int(float64(n)*f + 0.5) }
	m.mu.Lock()
	last := m.lastCount
	m.mu.Unlock()
	u := req.LastUsage
	if u != nil && u.PromptTokens > 0 && last > 0 && last < len(req.Messages) {
		bound, quick := byteBound(req.Messages[last+1:])
		base := u.PromptTokens + u.CompletionTokens - 3
		if base+scale(bound)+1 >= limit {
			return 0, false, false
		}
		return base + scale(quick), false, true
	}
	bound, quick := byteBound(req.Messages)
	if scale(bound)+1 >= limit {
		return 0, false, false
	}
	return scale(quick), true, true
}
