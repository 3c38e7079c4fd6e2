//go:build !darwin && !windows

package oslocale

// preferred: other systems have no preferred language beyond the locale
// variables.
func preferred() string { return "" }
