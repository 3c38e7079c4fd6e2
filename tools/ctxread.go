package tools

import (
	"context"
	"io"
)

// ContextReader returns a reader of r that fails with ctx's error once ctx
// is done: a long read or hash (io.Copy, io.ReadAll) stops at the next
// chunk after its turn is interrupted.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	return ctxReader{ctx, r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
