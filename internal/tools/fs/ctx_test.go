package fs

import (
	"context"
	"testing"
)

func contextWithCancel(t *testing.T) (context.Context, func()) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}
