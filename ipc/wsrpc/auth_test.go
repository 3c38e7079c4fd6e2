package wsrpc

import (
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
