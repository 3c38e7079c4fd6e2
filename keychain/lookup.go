package keychain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"
)

// LookupTimeout bounds every keychain call (a read, a store, a delete). A
// keychain that has not answered by then is reported as ErrNoAnswer; the
// call itself cannot be cancelled (go-keyring has no context) and goes on
// on its goroutine until the keychain answers or Close abandons it.
const LookupTimeout = 3 * time.Second

// closeGrace is how long Close waits for keychain calls before and after
// it aborts them.
const closeGrace = 250 * time.Millisecond

// lookup is one keychain read of a provider's key, shared by every caller
// that wants it while it runs and, when it found a key or none, after.
type lookup struct {
	done     chan struct{} // closed once key and err are set
	deadline time.Time     // when waiters stop waiting: started + timeout
	key      string
	err      error
}

// lookup returns provider's current lookup, starting one when there is
// none.
func (k *Keyring) lookup(provider string) *lookup {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.cache[provider]; l != nil {
		return l
	}
	if k.silentLocked() {
		// Another call has been waiting past its deadline: the keychain is
		// not answering anyone, so this lookup fails at once (uncached).
		l := &lookup{done: make(chan struct{}), err: k.noAnswer(provider)}
		close(l.done)
		return l
	}
	l := &lookup{done: make(chan struct{}), deadline: time.Now().Add(k.timeout)}
	k.cache[provider] = l
	k.run(func() {
		l.key, l.err = k.read(provider)
		k.mu.Lock()
		if l.err != nil && !errors.Is(l.err, ErrNotFound) && k.cache[provider] == l {
			delete(k.cache, provider) // an error is not kept: the next use asks again
		}
		k.mu.Unlock()
		close(l.done)
	})
	return l
}

// wait returns l's result, or ErrNoAnswer once l's deadline passed, or
// ctx's error. Callers that come after a lookup's deadline (the keychain
// is still silent) get ErrNoAnswer at once.
func (k *Keyring) wait(ctx context.Context, provider string, l *lookup) (string, error) {
	select {
	case <-l.done:
		return l.key, l.err
	default:
	}
	t := time.NewTimer(time.Until(l.deadline))
	defer t.Stop()
	select {
	case <-l.done:
		return l.key, l.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-t.C:
		return "", k.noAnswer(provider)
	}
}

// change runs a keychain write (fn) for provider, bounded like a lookup.
// Provider's cached lookup is forgotten before the write and again when it
// returns, however late.
func (k *Keyring) change(ctx context.Context, provider string, fn func() error) error {
	if why := checkBus(); why != "" {
		return unavailable(provider, why)
	}
	k.mu.Lock()
	delete(k.cache, provider)
	silent := k.silentLocked()
	k.mu.Unlock()
	if silent {
		return k.noAnswer(provider)
	}
	res := make(chan error, 1)
	k.run(func() {
		err := fn()
		k.forget(provider)
		res <- mapErr(provider, err)
	})
	t := time.NewTimer(k.timeout)
	defer t.Stop()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return k.noAnswer(provider)
	}
}

// forget drops provider's cached lookup.
func (k *Keyring) forget(provider string) {
	k.mu.Lock()
	delete(k.cache, provider)
	k.mu.Unlock()
}

// read asks the keychain for provider's key.
func (k *Keyring) read(provider string) (string, error) {
	if why := checkBus(); why != "" {
		return "", unavailable(provider, why)
	}
	key, err := keyring.Get(k.service, provider)
	if err != nil {
		return "", mapErr(provider, err)
	}
	return key, nil
}

// run starts a keychain call on its own goroutine, tracked for Close and
// silentLocked. k.mu may be held.
func (k *Keyring) run(fn func()) {
	id := k.nextCall.Add(1)
	k.startedMu.Lock()
	k.started[id] = time.Now()
	k.startedMu.Unlock()
	k.wg.Go(func() {
		defer func() {
			k.startedMu.Lock()
			delete(k.started, id)
			k.startedMu.Unlock()
		}()
		fn()
	})
}

// pending is how many keychain calls have not returned.
func (k *Keyring) pending() int {
	k.startedMu.Lock()
	defer k.startedMu.Unlock()
	return len(k.started)
}

// silentLocked reports whether a keychain call has been waiting longer
// than the timeout: the keychain is not answering.
func (k *Keyring) silentLocked() bool {
	k.startedMu.Lock()
	defer k.startedMu.Unlock()
	for _, at := range k.started {
		if time.Since(at) >= k.timeout {
			return true
		}
	}
	return false
}

func (k *Keyring) noAnswer(provider string) error {
	return fmt.Errorf("%w: %w within %s (it may be waiting for an unlock prompt); %s", ErrUnavailable, ErrNoAnswer, k.timeout, remedy(provider))
}

// Close ends the Keyring's keychain calls: it waits for them briefly, then
// aborts the ones still waiting (on Linux it closes the shared session bus
// connection, which fails their calls) and waits briefly again. Calls that
// still have not returned are abandoned, and Close says how many; it never
// waits for a keychain that does not answer.
func (k *Keyring) Close() error {
	if k.pending() == 0 {
		k.wg.Wait()
		return nil
	}
	done := make(chan struct{})
	go func() {
		k.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	abortCalls(closeGrace)
	t.Reset(closeGrace)
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: %d keychain calls abandoned at close", ErrNoAnswer, k.pending())
	}
}
