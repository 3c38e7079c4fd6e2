// Package web owns the network tools web_fetch and web_search, and the
// guarded HTTP client they (and tools/media) use to reach the internet.
//
// The guard: only http and https; every hop of a redirect chain is
// re-checked (scheme, host, resolved addresses) and the chain is capped;
// private, loopback, link-local, unspecified, multicast, CGNAT and other
// special-purpose addresses are refused unless AllowPrivate is set. The check
// runs twice: before each request (the host's resolved addresses) and at dial
// time in net.Dialer.Control on the address actually connected to, so a DNS
// answer that changes between check and connect (rebinding) cannot reach an
// internal service.
//
// Search backends (SearXNG, Brave) talk to the endpoint the shell
// configured, which may be a local SearXNG: they do not use the guard.
// web_search is offered to the model only while a backend is configured
// (Options.Search, SwitchableBackend). Backends without an HTTPClient dial
// through SOCKS5_PROXY when it is set (netproxy), as web_fetch does with the
// client backend.NewEngine gives it.
//
// Concurrency: the tools, the client returned by NewClient and the search
// backends are safe for concurrent use. No goroutine outlives a call.
package web
