package wsrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSendQueueBounds: the queue is bounded in bytes; a frame bigger than
// the bound still goes into an empty queue; a waiting push gives up with
// its context; no-wait frames (broadcasts) have headroom above the bound,
// and only a queue full past it refuses them.
func TestSendQueueBounds(t *testing.T) {
	q := newSendQueue(100)
	require.True(t, q.tryPush(make([]byte, 500)), "an empty queue takes any frame")
	require.False(t, q.tryPush(make([]byte, 1)))
	require.NotNil(t, q.take())
	require.Nil(t, q.take())

	require.True(t, q.tryPush(make([]byte, 60)))
	require.True(t, q.tryPush(make([]byte, 40)))
	require.False(t, q.tryPush(make([]byte, 1)), "full at the bound")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.False(t, q.push(ctx, make([]byte, 1)), "a waiting push ends with its context")
	require.True(t, q.tryPushNoWait(make([]byte, 1000)), "a broadcast fits in the headroom")
	require.False(t, q.tryPushNoWait(make([]byte, noWaitHeadroom)), "past the headroom the connection is stuck")

	// Taking frames makes room for a waiting push.
	done := make(chan bool)
	go func() { done <- q.push(context.Background(), make([]byte, 10)) }()
	for q.take() != nil {
	}
	require.True(t, <-done)
}
