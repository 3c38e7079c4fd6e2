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
		return http.StatusForbidden, reasonHost
	}
	if origin := r.Header.Get("Origin"); origin != "" && !e.originAllowed(origin) {
		return http.StatusForbidden, reasonOrigin
	}
	tok, ok := requestToken(r)
	if !ok {
		return http.StatusUnauthorized, reasonNoToken
	}
	// Both compared, so that the time taken says nothing about which.
	shell, peer := tokenEqual(tok, e.Token), tokenEqual(tok, e.PeerToken)
	if !shell && !peer {
		return http.StatusUnauthorized, reasonBadToken
	}
	// A browser offering the token subprotocol alone would get no
	// subprotocol back (the token one is never echoed) and fail the
	// connection with 1006, saying nothing: refuse it here, with a reason.
	if offered(r, TokenSubprotocolPrefix) && !offered(r, Subprotocol) {
		return http.StatusBadRequest, reasonNoSubprotocol
	}
	return 0, ""
}

// offered reports whether the upgrade offers a subprotocol equal to p, or,
// for TokenSubprotocolPrefix, one starting with it.
func offered(r *http.Request, p string) bool {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for o := range strings.SplitSeq(v, ",") {
			o = strings.TrimSpace(o)
			if o == p || p == TokenSubprotocolPrefix && strings.HasPrefix(o, p) {
				return true
			}
		}
	}
	return false
}

// The reasons of a refused upgrade, with what the shell's developer does
// about each (refusal logs them).
const (
	reasonHost     = "host not allowed"
	reasonOrigin   = "origin not allowed"
	reasonNoToken  = "missing token"
	reasonBadToken = "wrong token"
	// reasonNoSubprotocol: the token subprotocol offered without zqagent.v1.
	reasonNoSubprotocol = "subprotocol zqagent.v1 not offered"
)

var refusalHints = map[string]string{
	reasonHost:          "connect to the exact address of the ready line (127.0.0.1:<port>); other Host headers are refused against DNS rebinding",
	reasonOrigin:        "start the sidecar with --allow-origin <origin>, or the preset electron (app://*) or tauri",
	reasonNoToken:       "send the ready line's token: Authorization: Bearer <token>, or the subprotocol zqagent.token.<token> next to zqagent.v1",
	reasonBadToken:      "use the token of this sidecar's ready line (each start makes a new one unless ZQAGENT_TOKEN or --secrets-stdin sets it)",
	reasonNoSubprotocol: "offer both subprotocols: new WebSocket(url, [\"zqagent.v1\", \"zqagent.token.<token>\"]); the token one is never echoed, so without zqagent.v1 a browser closes with 1006",
}

// nullOriginHint replaces the hint of a refused "Origin: null".
const nullOriginHint = "Origin null (a file:// page, a sandboxed iframe, a data: page) is never allowed; serve an Electron renderer from a custom scheme registered as standard (app://…, --allow-origin electron) or connect from the main process"

// refusal logs a refused upgrade: one JSON line on SecurityLog (the
// sidecar's stderr) with the status, the reason, what was sent (cut to
// 200 bytes; never the token) and a hint, else a record on the logger.
func (e *Endpoint) refusal(r *http.Request, status int, reason string) {
	origin := r.Header.Get("Origin")
	hint := refusalHints[reason]
	if reason == reasonOrigin && strings.EqualFold(strings.TrimSpace(origin), "null") {
		hint = nullOriginHint
	}
	attrs := []any{"status", status, "reason", reason,
		"origin", clip(origin), "host", clip(r.Host), "remote", r.RemoteAddr,
		"hint", hint}
	if e.SecurityLog != nil {
		e.SecurityLog.Warn("upgrade refused", attrs...)
		return
	}
	e.Log.Info("upgrade refused", attrs...)
}

func clip(v string) string {
	if len(v) > 200 {
		return v[:200] + "…"
	}
	return v
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
