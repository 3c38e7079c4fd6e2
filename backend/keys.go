package backend

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/protocol"
)

// Providers whose key status is always reported, besides the stored
// profiles.
var wellKnownProviders = []string{DefaultProfile, "deepseek"}

// errNoKeyring is the error of keys.set and keys.delete on a server built
// without a keyring.
var errNoKeyring = fmt.Errorf("%w: this sidecar has no OS keychain; set the provider's API key environment variable (e.g. OPENAI_API_KEY) instead", keychain.ErrUnavailable)

func (b *Backend) SetKey(ctx context.Context, p protocol.KeysSetParams) (protocol.KeyStatus, error) {
	if err := keychain.ValidateProvider(p.Provider); err != nil {
		return protocol.KeyStatus{}, protocol.InvalidField("provider", err.Error())
	}
	if err := keychain.ValidateKey(p.APIKey); err != nil {
		return protocol.KeyStatus{}, protocol.InvalidField("apiKey", err.Error())
	}
	kr := b.opts.Keyring
	if kr == nil {
		return protocol.KeyStatus{}, fmt.Errorf("keys.set %s: %w", p.Provider, errNoKeyring)
	}
	if err := kr.Set(ctx, p.Provider, p.APIKey); err != nil {
		return protocol.KeyStatus{}, fmt.Errorf("keys.set %s: %w", p.Provider, err)
	}
	b.profileChanged(p.Provider)
	return b.keyStatus(p.Provider), nil
}

func (b *Backend) DeleteKey(ctx context.Context, p protocol.KeysProviderParams) (protocol.KeyStatus, error) {
	if err := keychain.ValidateProvider(p.Provider); err != nil {
		return protocol.KeyStatus{}, protocol.InvalidField("provider", err.Error())
	}
	kr := b.opts.Keyring
	if kr == nil {
		return protocol.KeyStatus{}, fmt.Errorf("keys.delete %s: %w", p.Provider, errNoKeyring)
	}
	if err := kr.Delete(ctx, p.Provider); err != nil {
		return protocol.KeyStatus{}, fmt.Errorf("keys.delete %s: %w", p.Provider, err)
	}
	b.profileChanged(p.Provider)
	return b.keyStatus(p.Provider), nil
}

func (b *Backend) KeysStatus(ctx context.Context, p protocol.Empty) (protocol.KeysStatusResult, error) {
	stored, err := b.opts.Store.ProviderProfiles(ctx)
	if err != nil {
		return protocol.KeysStatusResult{}, err
	}
	names := slices.Clone(wellKnownProviders)
	for _, pr := range stored {
		names = append(names, pr.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]protocol.KeyStatus, len(names))
	for i, n := range names {
		out[i] = b.keyStatus(n)
	}
	return protocol.KeysStatusResult{Keys: out}, nil
}

// keyStatus reports a provider's key status: the keychain wins over the
// environment. Without a keyring only the environment is looked at. The
// keyring answers from its cache, and within keychain.LookupTimeout when it
// must ask a keychain that does not answer (Error then says so).
func (b *Backend) keyStatus(provider string) protocol.KeyStatus {
	if kr := b.opts.Keyring; kr != nil {
		return protocol.KeyStatus(kr.Status(context.Background(), provider))
	}
	st := protocol.KeyStatus{Provider: provider, EnvVar: keychain.EnvVar(provider), Error: errNoKeyring.Error()}
	if os.Getenv(st.EnvVar) != "" {
		st.Configured, st.Source = true, keychain.SourceEnv
	}
	return st
}
