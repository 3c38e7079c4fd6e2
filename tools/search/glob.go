package search

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// globFilter selects files by glob patterns. A pattern without '/' matches
// the file's base name ("*.go"); one with '/' matches the path relative to
// the workspace root ("src/**/*.ts"). "**" spans directories, "{a,b}" is an
// alternation, and a leading '!' makes the pattern exclude. A file passes
// when it matches an include (or there are none) and no exclude.
type globFilter struct {
	include, exclude []*regexp.Regexp
	baseOnly         []bool // per include then exclude: match the base name
}

func newGlobFilter(globs []string) (*globFilter, error) {
	g := &globFilter{}
	var inBase, exBase []bool
	for _, raw := range globs {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		neg := strings.HasPrefix(s, "!")
		s = strings.TrimPrefix(s, "!")
		s = strings.TrimPrefix(s, "./")
		base := !strings.Contains(s, "/")
		s = strings.TrimPrefix(s, "/")
		re, err := globRegexp(s)
		if err != nil {
			return nil, fmt.Errorf("%w: glob %q: %v", ErrBadPattern, raw, err)
		}
		if neg {
			g.exclude, exBase = append(g.exclude, re), append(exBase, base)
		} else {
			g.include, inBase = append(g.include, re), append(inBase, base)
		}
	}
	g.baseOnly = append(inBase, exBase...)
	return g, nil
}

// empty reports whether the filter lets everything through.
func (g *globFilter) empty() bool { return len(g.include) == 0 && len(g.exclude) == 0 }

// match reports whether the file at rel (slash-separated, relative to the
// workspace root) passes.
func (g *globFilter) match(rel string) bool {
	base := path.Base(rel)
	pick := func(i int) string {
		if g.baseOnly[i] {
			return base
		}
		return rel
	}
	ok := len(g.include) == 0
	for i, re := range g.include {
		if re.MatchString(pick(i)) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	for i, re := range g.exclude {
		if re.MatchString(pick(len(g.include) + i)) {
			return false
		}
	}
	return true
}

// globRegexp translates a glob into an anchored regexp.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0 // inside {...}
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				i++
				if i+1 < len(glob) && glob[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unclosed [")
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("unmatched }")
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unclosed {")
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
