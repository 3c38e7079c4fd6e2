//go:build !darwin

package ocr

import (
	"context"
	"fmt"
)

func visionOCR(context.Context, string, string, []string) (string, error) {
	return "", fmt.Errorf("%w: macOS Vision exists only on macOS", errSkip)
}
