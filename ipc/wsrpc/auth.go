package wsrpc

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
)

// Subprotocol is the protocol name the server echoes when a client offers it.
const Subprotocol = "zqagent.v1"

// TokenSubprotocolPrefix prefixes the token when a client (a browser) cannot
// set an Authorization header: it offers "zqagent.token.<token>" next to
// Subprotocol. The token subprotocol is never echoed.
const TokenSubprotocolPrefix = "zqagent.token."

// checkUpgrade applies SPEC §4 to an upgrade request before anything else is
// done with it. It returns the HTTP status to refuse with (0 when allowed) and
// a reason for the log that never contains the token.
func (e *Endpoint) checkUpgrade(r *http.Request) (status int, reason string) {
	if !e.hostAllowed(r.Host) {
		return http.StatusForbidden, "host not allowed"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !e.originAllowed(origin) {
		return http.StatusForbidden, "origin not allowed"
	}
	tok, ok := requestToken(r)
	if !ok {
		return http.StatusUnauthorized, "missing token"
	}
	// Both compared, so that the time taken says nothing about which.
	shell, peer := tokenEqual(tok, e.Token), tokenEqual(tok, e.PeerToken)
	if !shell && !peer {
		return http.StatusUnauthorized, "wrong token"
	}
	return 0, ""
}

// hostAllowed accepts exactly the loopback names with the listening port.
func (e *Endpoint) hostAllowed(host string) bool {
	port := e.port.Load()
	if port == 0 {
		return false
	}
	p := strconv.Itoa(int(port))
	switch strings.ToLower(host) {
	case "127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p:
		return true
	}
	return false
}

func (e *Endpoint) originAllowed(origin string) bool {
	origin = strings.TrimRight(strings.ToLower(origin), "/")
	for _, o := range e.AllowOrigins {
		if strings.TrimRight(strings.ToLower(o), "/") == origin {
			return true
		}
	}
	return false
}

// requestToken finds the token in the Authorization header or in an offered
// token subprotocol.
func requestToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok), true
		}
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.TrimSpace(p)
			if tok, ok := strings.CutPrefix(p, TokenSubprotocolPrefix); ok {
				return tok, true
			}
		}
	}
	return "", false
}

// tokenEqual compares in constant time, also for tokens of the wrong length:
// both sides are hashed to 32 bytes first, so neither the length nor a common
// prefix changes the time taken.
func tokenEqual(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1 && want != ""
}
