package engine

import (
	"log/slog"
	"strings"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// MaxCardDiffBytes bounds protocol.CardDiff.Unified.
const MaxCardDiffBytes = 64 << 10

// cardDiff is the diff of an approval card: what the tool's Preview says
// the call will change, cut to MaxCardDiffBytes at a line end; nil without
// a Preview, when it fails or when nothing changes.
func (t *turn) cardDiff(tg tools.Target) *protocol.CardDiff {
	if tg.Spec.Preview == nil {
		return nil
	}
	d, err := tg.Spec.Preview(t.ctx, tg.Args)
	if err != nil {
		slog.Debug("no diff for the approval card", "tool", tg.Spec.Name, "err", err)
		return nil
	}
	if d == "" {
		return nil
	}
	if len(d) <= MaxCardDiffBytes {
		return &protocol.CardDiff{Unified: d}
	}
	cut := d[:cutUTF8(d, MaxCardDiffBytes)]
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return &protocol.CardDiff{Unified: cut, Truncated: true}
}

// diff checks a card's diff like a text field, except that the line ends
// of a CRLF file alone do not flag it.
func (c *cardCheck) diff(d *protocol.CardDiff) {
	if d != nil && len(textKinds(strings.ReplaceAll(d.Unified, "\r\n", "\n"), false)) > 0 {
		c.text("diff.unified", d.Unified)
	}
}
