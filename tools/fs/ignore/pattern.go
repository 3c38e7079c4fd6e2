package ignore

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// pattern is one line of an ignore file.
type pattern struct {
	glob    string // doublestar pattern; "" for a literal kept in a map
	neg     bool   // "!pattern": re-includes
	dirOnly bool   // "pattern/": matches directories only
}

// set is the patterns of one directory's ignore files, indexed so that a
// path is checked against a few candidates rather than every pattern.
// Indexes into pats are in file order: the highest matching one wins.
type set struct {
	pats     []pattern
	base     map[string][]int32 // unanchored literal: the entry's name
	path     map[string][]int32 // anchored literal: the path below the set's directory
	ext      map[string][]int32 // unanchored "*.ext" (one dot): the name's last ".ext"
	globBase []int32            // other unanchored patterns, matched against the name
	globPath []int32            // other anchored patterns, matched against the path
}

// Kinds of pattern, by how a path is checked against them.
type kind uint8

const (
	kindName     kind = iota // literal, unanchored: a map lookup of the entry's name
	kindPath                 // literal, anchored: a map lookup of the path
	kindExt                  // "*.ext", unanchored: a map lookup of the name's last ".ext"
	kindGlobName             // other unanchored: doublestar against the name
	kindGlobPath             // other anchored: doublestar against the path
)

// parseLine reads one ignore file line. ok is false for blank lines and
// comments, and for a pattern doublestar cannot match (such as an unclosed
// "["), which is dropped. key is the map key of the literal kinds.
func parseLine(line string) (p pattern, k kind, key string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	if t := strings.TrimRight(line, " "); len(t) < len(line) {
		if strings.HasSuffix(t, `\`) { // "\ " keeps one space
			t += " "
		}
		line = t
	}
	if line == "" || line[0] == '#' {
		return p, 0, "", false
	}
	if line[0] == '!' {
		p.neg = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	switch {
	case line == "":
		return p, 0, "", false
	case !strings.ContainsAny(line, `*?[\`) && anchored:
		return p, kindPath, line, true
	case !strings.ContainsAny(line, `*?[\`):
		return p, kindName, line, true
	case !anchored && strings.HasPrefix(line, "*.") && !strings.ContainsAny(line[2:], `*?[\.`) && len(line) > 2:
		return p, kindExt, line[1:], true
	}
	p.glob = escapeBraces(line)
	k = kindGlobName
	if anchored {
		k = kindGlobPath
	}
	return p, k, "", doublestar.ValidatePattern(p.glob)
}

// escapeBraces escapes "{" and "}": gitignore has no alternation, doublestar
// does.
func escapeBraces(s string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			b.WriteByte(s[i])
			continue
		case c == '{' || c == '}':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// add appends one parsed pattern.
func (s *set) add(p pattern, k kind, key string) {
	i := int32(len(s.pats))
	s.pats = append(s.pats, p)
	switch k {
	case kindName:
		s.base = addKey(s.base, key, i)
	case kindPath:
		s.path = addKey(s.path, key, i)
	case kindExt:
		s.ext = addKey(s.ext, key, i)
	case kindGlobName:
		s.globBase = append(s.globBase, i)
	case kindGlobPath:
		s.globPath = append(s.globPath, i)
	}
}

func addKey(m map[string][]int32, k string, i int32) map[string][]int32 {
	if m == nil {
		m = map[string][]int32{}
	}
	m[k] = append(m[k], i)
	return m
}

// match returns the index of the last pattern matching the entry at sub
// (slash path below the set's directory) named name, or -1.
func (s *set) match(sub, name string, isDir bool) int32 {
	best := int32(-1)
	last := func(list []int32) {
		for k := len(list) - 1; k >= 0 && list[k] > best; k-- {
			if !s.pats[list[k]].dirOnly || isDir {
				best = list[k]
				return
			}
		}
	}
	last(s.base[name])
	last(s.path[sub])
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 && s.ext != nil {
		last(s.ext[name[dot:]])
	}
	globs := func(list []int32, target string) {
		for k := len(list) - 1; k >= 0 && list[k] > best; k-- {
			p := s.pats[list[k]]
			if (!p.dirOnly || isDir) && doublestar.MatchUnvalidated(p.glob, target) {
				best = list[k]
				return
			}
		}
	}
	globs(s.globBase, name)
	globs(s.globPath, sub)
	return best
}
