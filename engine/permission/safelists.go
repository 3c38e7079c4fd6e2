package permission

import (
	"regexp"
	"strings"
)

// The known-safe options of the read-only commands a shell is likely to
// allowlist (GNU coreutils, grep, ripgrep, findutils). None of them executes
// a program or writes a file; an option not listed asks.
var (
	lsOpts = newOptSet("aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "ITw", false,
		"--all", "--almost-all", "--author", "--escape", "--block-size", "--ignore-backups", "--color",
		"--directory", "--dired", "--classify", "--file-type", "--format", "--full-time",
		"--group-directories-first", "--no-group", "--human-readable", "--si", "--dereference-command-line",
		"--dereference-command-line-symlink-to-dir", "--hide", "--hyperlink", "--indicator-style", "--inode",
		"--ignore", "--kibibytes", "--dereference", "--literal", "--numeric-uid-gid", "--hide-control-chars",
		"--show-control-chars", "--quote-name", "--quoting-style", "--reverse", "--recursive", "--size",
		"--sort", "--time", "--time-style", "--tabsize", "--width", "--context", "--zero", "--help", "--version")
	catOpts = newOptSet("AbeEnstTuv", "", false,
		"--show-all", "--number-nonblank", "--show-ends", "--number", "--squeeze-blank", "--show-tabs",
		"--show-nonprinting", "--help", "--version")
	headOpts = newOptSet("qvz", "cn", true,
		"--bytes", "--lines", "--quiet", "--silent", "--verbose", "--zero-terminated", "--help", "--version")
	tailOpts = newOptSet("fFqrvz", "cns", true,
		"--bytes", "--follow", "--lines", "--max-unchanged-stats", "--pid", "--quiet", "--silent", "--retry",
		"--sleep-interval", "--verbose", "--zero-terminated", "--help", "--version")
	wcOpts = newOptSet("clLmw", "", false,
		"--bytes", "--chars", "--lines", "--files0-from", "--max-line-length", "--words", "--total", "--help", "--version")
	grepOpts = newOptSet("EFGPiyvwxcoqsbHhnTZzraIRlLUVu", "ABCefmdD", true,
		"--extended-regexp", "--fixed-strings", "--basic-regexp", "--perl-regexp", "--regexp", "--file",
		"--ignore-case", "--no-ignore-case", "--word-regexp", "--line-regexp", "--null-data", "--no-messages",
		"--invert-match", "--version", "--help", "--max-count", "--byte-offset", "--line-number",
		"--no-line-number", "--line-buffered", "--with-filename", "--no-filename", "--label", "--only-matching",
		"--quiet", "--silent", "--binary-files", "--text", "--directories", "--devices", "--recursive",
		"--dereference-recursive", "--include", "--exclude", "--exclude-from", "--exclude-dir",
		"--files-without-match", "--files-with-matches", "--count", "--initial-tab", "--null",
		"--before-context", "--after-context", "--context", "--color", "--colour", "--binary")
	// rgOpts leaves out --pre, --pre-glob, --search-zip (-z) and
	// --hostname-bin, which run programs.
	rgOpts = newOptSet("cFHhIilLnNopPqsSuUvVwx0ab.", "ABCeEfgjmMrtTd", false,
		"--after-context", "--before-context", "--context", "--count", "--count-matches", "--regexp",
		"--encoding", "--file", "--fixed-strings", "--glob", "--iglob", "--with-filename", "--no-filename",
		"--help", "--ignore-case", "--threads", "--files-with-matches", "--files-without-match", "--follow",
		"--max-count", "--max-columns", "--max-columns-preview", "--line-number", "--no-line-number",
		"--only-matching", "--pretty", "--pcre2", "--quiet", "--replace", "--case-sensitive", "--smart-case",
		"--type", "--type-not", "--type-list", "--type-add", "--type-clear", "--unrestricted", "--multiline",
		"--multiline-dotall", "--invert-match", "--version", "--word-regexp", "--line-regexp", "--null",
		"--null-data", "--text", "--byte-offset", "--max-depth", "--hidden", "--no-hidden", "--no-ignore",
		"--no-ignore-vcs", "--no-ignore-parent", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude",
		"--no-ignore-files", "--ignore-file", "--ignore-file-case-insensitive", "--files", "--sort", "--sortr",
		"--json", "--color", "--colors", "--column", "--no-column", "--heading", "--no-heading", "--trim",
		"--vimgrep", "--stats", "--passthru", "--no-messages", "--binary", "--no-binary", "--no-config",
		"--engine", "--auto-hybrid-regex", "--crlf", "--no-crlf", "--dfa-size-limit", "--regex-size-limit",
		"--mmap", "--no-mmap", "--one-file-system", "--path-separator", "--max-filesize", "--no-unicode",
		"--glob-case-insensitive", "--no-require-git", "--context-separator", "--no-context-separator",
		"--field-context-separator", "--field-match-separator", "--include-zero", "--line-buffered",
		"--block-buffered", "--stop-on-nonmatch", "--no-follow", "--no-pcre2", "--no-messages", "--debug")
)

// findSafe are find's predicates and options that neither execute, delete
// nor write files (-exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0,
// -fprintf and -fls are not among them).
var findSafe = map[string]bool{}

// findNewer is -newerXY.
var findNewer = regexp.MustCompile(`^-newer[aBcmt][aBcmt]$`)

func init() {
	for _, p := range strings.Fields(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype
		-lname -ilname -type -xtype -size -empty -perm -user -group -uid -gid -nouser -nogroup -links -inum
		-samefile -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -used -daystart -maxdepth
		-mindepth -depth -d -prune -quit -print -print0 -printf -ls -not -a -and -o -or -true -false -follow
		-L -H -P -xdev -mount -readable -writable -executable -noleaf -ignore_readdir_race
		-noignore_readdir_race -fstype -context -help --help -version --version -warn -nowarn -O0 -O1 -O2 -O3 -D`) {
		findSafe[p] = true
	}
}

// findArgs allows find's known-safe predicates only. A negative number
// (-mtime -7, -size -10k) is a predicate's value.
func findArgs(args []string) string {
	for _, a := range args {
		switch {
		case len(a) < 2 || a[0] != '-' || findSafe[a] || findNewer.MatchString(a):
		case a[1] >= '0' && a[1] <= '9':
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			return "find " + a + " executes commands"
		case a == "-delete":
			return "find -delete removes files"
		case strings.HasPrefix(a, "-fprint") || a == "-fls":
			return "find " + a + " writes a file"
		default:
			return "find " + a + " is not a predicate known to be safe"
		}
	}
	return ""
}
