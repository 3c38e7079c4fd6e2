package wsrpc

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTokenEqual(t *testing.T) {
	require.True(t, tokenEqual("abc", "abc"))
	require.False(t, tokenEqual("abd", "abc"))
	require.False(t, tokenEqual("ab", "abc"))
	require.False(t, tokenEqual("abcd", "abc"))
	require.False(t, tokenEqual("", ""))
}

// The token subprotocol offered without zqagent.v1 is refused with a reason
// (a browser would otherwise close with 1006 and nothing said).
func TestCheckUpgradeSubprotocols(t *testing.T) {
	e := &Endpoint{Token: "tok"}
	e.SetPort(4242)
	cases := []struct {
		offer  []string // Sec-WebSocket-Protocol header values
		status int
		reason string
	}{
		{[]string{"zqagent.v1, zqagent.token.tok"}, 0, ""},
		{[]string{"zqagent.token.tok", "zqagent.v1"}, 0, ""},
		{[]string{"zqagent.token.tok"}, http.StatusBadRequest, reasonNoSubprotocol},
		{[]string{"zqagent.token.tok, zqagent.v2"}, http.StatusBadRequest, reasonNoSubprotocol},
		{[]string{"zqagent.token.wrong"}, http.StatusUnauthorized, reasonBadToken},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "http://127.0.0.1:4242/rpc", nil)
		for _, v := range tc.offer {
			r.Header.Add("Sec-WebSocket-Protocol", v)
		}
		status, reason := e.checkUpgrade(r)
		require.Equal(t, tc.status, status, "%q", tc.offer)
		require.Equal(t, tc.reason, reason, "%q", tc.offer)
	}
}
