package model

import (
	"context"
	"errors"
)

// IsCanceled reports whether err is a request stopped by its context (the
// stream tests check that a cancelled request's error wraps it; callers
// use errors.Is).
func IsCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
