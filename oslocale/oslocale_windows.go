//go:build windows

package oslocale

import "golang.org/x/sys/windows"

// preferred returns the first of the user's preferred UI languages
// (Settings → Time & language), e.g. "ja-JP".
func preferred() string {
	langs, err := windows.GetUserPreferredUILanguages(windows.MUI_LANGUAGE_NAME)
	if err != nil || len(langs) == 0 {
		return ""
	}
	return langs[0]
}
