package ipc

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProtocolDocMatchesRoutes: every method documented in ui-protocol.md
// (a heading "### `method`") is routed, and every routed method is
// documented.
func TestProtocolDocMatchesRoutes(t *testing.T) {
	doc, err := os.ReadFile("../ui-protocol.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?m)^### `([a-zA-Z]+(?:\\.[a-zA-Z]+)*)`\\s*$")
	var documented []string
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	require.NotEmpty(t, documented)
	ts := startServer(t)
	routed := ts.srv.Methods()
	notifications := []string{"session.event", "session.dropped"}
	for _, m := range documented {
		if slices.Contains(notifications, m) {
			continue
		}
		require.Contains(t, routed, m, "documented in ui-protocol.md but not routed")
	}
	for _, m := range routed {
		require.Contains(t, documented, m, "routed but not documented in ui-protocol.md")
	}
}
