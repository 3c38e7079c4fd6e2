//go:build darwin

package oslocale

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// preferred returns the first of the user's preferred languages (System
// Settings → Language & Region), else the region format's locale.
func preferred() string {
	if t := firstAppleLanguage(readDefault("AppleLanguages")); t != "" {
		return t
	}
	return strings.TrimSpace(readDefault("AppleLocale"))
}

// readDefault reads a global user default; "" when it is unset or the
// command fails.
func readDefault(key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/bin/defaults", "read", "-g", key).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// firstAppleLanguage takes the first entry of the property list array
// `defaults read -g AppleLanguages` prints:
//
//	(
//	    "en-US",
//	    "ja-JP"
//	)
func firstAppleLanguage(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		t := strings.Trim(strings.TrimSpace(line), `",`)
		if t != "" && t != "(" && t != ")" {
			return t
		}
	}
	return ""
}
