package permission

import "strings"

// sedArgs refuses in-place editing, script files, and scripts with commands
// that write files or execute (w, W, e, and the s command's w and e flags).
func sedArgs(args []string) string {
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if !explicit && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			i = len(args)
		case a == "-i" || strings.HasPrefix(a, "--in-place"):
			return "sed -i edits files in place"
		case a == "-f" || strings.HasPrefix(a, "--file"):
			return "sed -f runs a script file"
		case strings.HasPrefix(a, "--expression="):
			scripts, explicit = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case a == "--expression":
			if i+1 < len(args) {
				scripts, explicit = append(scripts, args[i+1]), true
				i++
			}
		case a == "-l" || a == "--line-length":
			i++
		case strings.HasPrefix(a, "--"):
			switch strings.SplitN(a, "=", 2)[0] {
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered",
				"--null-data", "--zero-terminated", "--posix", "--debug", "--sandbox", "--follow-symlinks",
				"--line-length", "--help", "--version":
			default:
				return "sed " + a + " is not a known read-only option"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// A cluster of short options; e and f take the rest or the next word.
		cluster:
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch c {
				case 'n', 'E', 'r', 's', 'u', 'z':
					continue
				case 'i':
					return "sed -i edits files in place"
				case 'f':
					return "sed -f runs a script file"
				case 'l':
					if j == len(a)-1 {
						i++
					}
					break cluster
				case 'e':
					explicit = true
					if j < len(a)-1 {
						scripts = append(scripts, a[j+1:])
					} else if i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					}
					break cluster
				default:
					return "sed -" + string(c) + " is not a known read-only option"
				}
			}
		default:
			if !explicit {
				scripts, explicit = append(scripts, a), true
			}
		}
	}
	for _, s := range scripts {
		if r := sedScriptDanger(s); r != "" {
			return r
		}
	}
	return ""
}

// sedScriptDanger scans a sed script and returns why it is unsafe: a w, W or
// e command, an s command with a w or e flag, or anything it cannot parse.
func sedScriptDanger(s string) string {
	p := &sedScanner{s: s}
	for {
		p.skipSpaceAndSeps()
		if p.eof() {
			return ""
		}
		if p.peek() == '#' {
			p.skipLine()
			continue
		}
		if !p.address() {
			return "sed script could not be checked"
		}
		p.skipBlanks()
		if p.peek() == ',' {
			p.i++
			p.skipBlanks()
			if !p.address() {
				return "sed script could not be checked"
			}
		}
		p.skipBlanks()
		for !p.eof() && p.peek() == '!' {
			p.i++
			p.skipBlanks()
		}
		if p.eof() {
			return "sed script could not be checked"
		}
		c := p.next()
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			p.skipWhile(func(b byte) bool { return b == ' ' || (b >= '0' && b <= '9') })
		case 'a', 'i', 'c', 'r', 'R', ':', 'b', 't', 'T', 'v':
			// Text, a file to read, or a label: the rest of the line (labels
			// end at ';' too).
			if c == ':' || c == 'b' || c == 't' || c == 'T' || c == 'v' {
				p.skipWhile(func(b byte) bool { return b != ';' && b != '\n' && b != '}' })
			} else {
				p.skipLine()
			}
		case 'w', 'W':
			return "sed " + string(c) + " command writes a file"
		case 'e':
			return "sed e command executes a command"
		case 's':
			if !p.delimited(2) {
				return "sed script could not be checked"
			}
			for !p.eof() {
				f := p.peek()
				if f == 'w' || f == 'e' {
					return "sed s///" + string(f) + " flag writes a file or executes"
				}
				if f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || (f >= '0' && f <= '9') {
					p.i++
					continue
				}
				break
			}
		case 'y':
			if !p.delimited(2) {
				return "sed script could not be checked"
			}
		default:
			return "sed script has an unknown command " + string(c)
		}
	}
}

type sedScanner struct {
	s string
	i int
}

func (p *sedScanner) eof() bool { return p.i >= len(p.s) }
func (p *sedScanner) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}
func (p *sedScanner) next() byte { c := p.s[p.i]; p.i++; return c }

func (p *sedScanner) skipWhile(f func(byte) bool) {
	for !p.eof() && f(p.peek()) {
		p.i++
	}
}
func (p *sedScanner) skipBlanks() { p.skipWhile(func(b byte) bool { return b == ' ' || b == '\t' }) }
func (p *sedScanner) skipSpaceAndSeps() {
	p.skipWhile(func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == ';' })
}
func (p *sedScanner) skipLine() { p.skipWhile(func(b byte) bool { return b != '\n' }) }

// address consumes an optional address: a number (with ~step or +n), $, or
// a /regex/ or \cregexc with I/M modifiers.
func (p *sedScanner) address() bool {
	if p.eof() {
		return true
	}
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.skipWhile(func(b byte) bool { return b >= '0' && b <= '9' })
		if !p.eof() && (p.peek() == '~' || p.peek() == '+') {
			p.i++
			p.skipWhile(func(b byte) bool { return b >= '0' && b <= '9' })
		}
	case c == '$':
		p.i++
	case c == '+' || c == '~':
		p.i++
		p.skipWhile(func(b byte) bool { return b >= '0' && b <= '9' })
	case c == '/':
		if !p.delimited(1) {
			return false
		}
		p.skipWhile(func(b byte) bool { return b == 'I' || b == 'M' })
	case c == '\\':
		p.i++
		if !p.delimited(1) {
			return false
		}
		p.skipWhile(func(b byte) bool { return b == 'I' || b == 'M' })
	}
	return true
}

// delimited consumes a delimiter and n delimited parts after it
// (s/a/b/ has 2, /re/ has 1), honouring backslash escapes.
func (p *sedScanner) delimited(n int) bool {
	if p.eof() {
		return false
	}
	d := p.next()
	if d == '\\' || d == '\n' {
		return false
	}
	for k := 0; k < n; k++ {
		for {
			if p.eof() {
				return false
			}
			c := p.next()
			if c == '\\' {
				if p.eof() {
					return false
				}
				p.i++
				continue
			}
			if c == d {
				break
			}
		}
	}
	return true
}
