package ipc

import (
	"bytes"
	"encoding/json"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/protocol"
)

// providerRoutes: keys.*, providers.* and models.list (the backend's
// keys.go, providers_methods.go and provider.go).
func providerRoutes() map[string]handler {
	return map[string]handler{
		"keys.set":         call((*backend.Backend).SetKey),
		"keys.delete":      call((*backend.Backend).DeleteKey),
		"keys.status":      call((*backend.Backend).KeysStatus),
		"providers.list":   call((*backend.Backend).Providers),
		"providers.set":    routeDecoded(decodeProvidersSet, callOf((*backend.Backend).SetProvider)),
		"providers.delete": call((*backend.Backend).DeleteProvider),
		"models.list":      call((*backend.Backend).Models),
	}
}

// decodeProvidersSet decodes providers.set's params, its retry object
// strictly: an unknown member is a typo that would silently leave a default
// in force.
func decodeProvidersSet(raw json.RawMessage) (protocol.ProvidersSetParams, error) {
	p, err := decodeStrict[protocol.ProvidersSetParams](raw)
	if err != nil || p.Retry == nil {
		return p, err
	}
	var strict struct {
		Retry json.RawMessage `json:"retry"`
	}
	if err := json.Unmarshal(raw, &strict); err != nil {
		return p, err
	}
	if r := bytes.TrimSpace(strict.Retry); len(r) == 0 || r[0] != '{' {
		return p, protocol.InvalidField("retry", "must be an object")
	}
	var r protocol.RetrySettings
	dec := json.NewDecoder(bytes.NewReader(strict.Retry))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return p, protocol.InvalidField("retry", "members are maxRetries, timeoutMs, streamIdleMs, networkRetryMax, networkRetryBaseMs (non-negative integers): "+err.Error())
	}
	p.Retry = &r
	return p, nil
}
