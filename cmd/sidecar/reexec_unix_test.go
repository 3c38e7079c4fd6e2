//go:build unix

package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// handoverPipe returns a descriptor to read data from, as an inherited
// pipe would be.
func handoverPipe(t *testing.T, data string) int {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	_, err = w.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	fd, err := syscall.Dup(int(r.Fd()))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	return fd
}

func TestHandedOverSecrets(t *testing.T) {
	t.Setenv(handoverFDEnv, "")
	os.Unsetenv(handoverFDEnv)
	env, ok, err := handedOverSecrets()
	require.NoError(t, err)
	require.False(t, ok, "the first image")
	require.Nil(t, env)

	t.Setenv(handoverFDEnv, strconv.Itoa(handoverPipe(t, `{"env":{"OPENAI_API_KEY":"sk-1","ZQAGENT_TOKEN":"tok"}}`)))
	env, ok, err = handedOverSecrets()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, map[string]string{"OPENAI_API_KEY": "sk-1", "ZQAGENT_TOKEN": "tok"}, env)
	_, set := os.LookupEnv(handoverFDEnv)
	require.False(t, set, "the variable is removed")

	t.Setenv(handoverFDEnv, strconv.Itoa(handoverPipe(t, `{"env":{"OPENAI_API_KEY":"sk-secret-`)))
	_, _, err = handedOverSecrets()
	require.ErrorContains(t, err, "malformed")
	require.NotContains(t, err.Error(), "sk-secret")

	for _, bad := range []string{"x", "1", "-5"} {
		t.Setenv(handoverFDEnv, bad)
		_, _, err = handedOverSecrets()
		require.ErrorContains(t, err, "is not an inherited descriptor")
	}
}
