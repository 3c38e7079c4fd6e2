package diff

import (
	"strings"
)

// Patch markers of the apply_patch format.
const (
	beginPatch  = "*** Begin Patch"
	endPatch    = "*** End Patch"
	addFile     = "*** Add File: "
	deleteFile  = "*** Delete File: "
	updateFile  = "*** Update File: "
	moveTo      = "*** Move to: "
	endOfFile   = "*** End of File"
	chunkMarker = "@@"
)

// OpKind is what a patch operation does to its file.
type OpKind int

// Operation kinds.
const (
	OpAdd OpKind = iota
	OpDelete
	OpUpdate
)

func (k OpKind) String() string {
	switch k {
	case OpAdd:
		return "add"
	case OpDelete:
		return "delete"
	case OpUpdate:
		return "update"
	}
	return "unknown"
}

// Patch is a parsed apply_patch text.
type Patch struct {
	Ops []FileOp
}

// FileOp is one "*** Add/Delete/Update File" section.
type FileOp struct {
	Kind    OpKind
	Path    string
	MoveTo  string  // Update only; "" when the file stays
	Content string  // Add only: the new file's content
	Chunks  []Chunk // Update only
	Line    int     // 1-based line of the section header in the patch text
}

// Chunk is one "@@" hunk of an Update section.
type Chunk struct {
	// Context is the text after "@@ " (a line to find first, such as a
	// function signature); "" when the hunk has none.
	Context string
	Old     []string // context and removed lines, in order
	New     []string // context and added lines, in order
	// Kinds holds one byte per hunk line, ' ', '-' or '+', in order: Old
	// is the ' ' and '-' lines, New the ' ' and '+' lines.
	Kinds string
	EOF   bool // "*** End of File": the hunk ends at the end of the file
	Line  int  // 1-based line of the hunk in the patch text
}

// firstLine is the hunk's first line to show in errors.
func (c Chunk) firstLine() string {
	if c.Context != "" {
		return c.Context
	}
	for _, l := range c.Old {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	if len(c.New) > 0 {
		return c.New[0]
	}
	return ""
}

// ParsePatch parses the apply_patch format:
//
//	*** Begin Patch
//	*** Add File: path        followed by "+" lines
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path     (optional)
//	@@ optional context line
//	 context / -removed / +added lines
//	*** End of File           (optional, anchors the hunk at the end)
//	*** End Patch
//
// Lines before "*** Begin Patch" and after "*** End Patch" (a shell heredoc
// wrapper, say) are ignored. CRLF line ends are accepted.
func ParsePatch(text string) (*Patch, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) == beginPatch {
			begin = i
			break
		}
	}
	if begin < 0 {
		return nil, parseErr(1, "the patch must start with %q", beginPatch)
	}
	for i := len(lines) - 1; i > begin; i-- {
		if strings.TrimSpace(lines[i]) == endPatch {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, parseErr(len(lines), "the patch must end with %q", endPatch)
	}
	p := &parser{lines: lines[:end], i: begin + 1}
	patch := &Patch{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case strings.TrimSpace(l) == "":
			p.i++
		case strings.HasPrefix(l, addFile):
			op, err := p.parseAdd()
			if err != nil {
				return nil, err
			}
			patch.Ops = append(patch.Ops, op)
		case strings.HasPrefix(l, deleteFile):
			path, err := p.header(deleteFile)
			if err != nil {
				return nil, err
			}
			patch.Ops = append(patch.Ops, FileOp{Kind: OpDelete, Path: path, Line: p.i})
		case strings.HasPrefix(l, updateFile):
			op, err := p.parseUpdate()
			if err != nil {
				return nil, err
			}
			patch.Ops = append(patch.Ops, op)
		default:
			return nil, parseErr(p.i+1, "expected \"*** Add File:\", \"*** Delete File:\", \"*** Update File:\" or %q, got %q", endPatch, clip(l))
		}
	}
	if len(patch.Ops) == 0 {
		return nil, parseErr(begin+1, "the patch changes no file")
	}
	return patch, nil
}

type parser struct {
	lines []string
	i     int // index of the next line
}

// header consumes a "*** X: path" line and returns the path.
func (p *parser) header(prefix string) (string, error) {
	path := strings.TrimSpace(strings.TrimPrefix(p.lines[p.i], prefix))
	p.i++
	if path == "" {
		return "", parseErr(p.i, "%q needs a path", strings.TrimSpace(prefix))
	}
	return path, nil
}

func (p *parser) atSection() bool {
	l := p.lines[p.i]
	return strings.HasPrefix(l, addFile) || strings.HasPrefix(l, deleteFile) || strings.HasPrefix(l, updateFile)
}

func (p *parser) parseAdd() (FileOp, error) {
	line := p.i + 1
	path, err := p.header(addFile)
	if err != nil {
		return FileOp{}, err
	}
	var b strings.Builder
	for p.i < len(p.lines) && !p.atSection() {
		l := p.lines[p.i]
		switch {
		case strings.HasPrefix(l, "+"):
			b.WriteString(l[1:])
			b.WriteByte('\n')
		case strings.TrimSpace(l) == "" && p.onlyBlankUntilSection():
			// blank lines between sections
		default:
			return FileOp{}, parseErr(p.i+1, "in \"*** Add File: %s\" every line must start with \"+\", got %q", path, clip(l))
		}
		p.i++
	}
	return FileOp{Kind: OpAdd, Path: path, Content: b.String(), Line: line}, nil
}

// onlyBlankUntilSection reports whether only blank lines remain before the
// next section (or the end).
func (p *parser) onlyBlankUntilSection() bool {
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		if strings.HasPrefix(l, addFile) || strings.HasPrefix(l, deleteFile) || strings.HasPrefix(l, updateFile) {
			return true
		}
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

func (p *parser) parseUpdate() (FileOp, error) {
	op := FileOp{Kind: OpUpdate, Line: p.i + 1}
	path, err := p.header(updateFile)
	if err != nil {
		return op, err
	}
	op.Path = path
	if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], moveTo) {
		if op.MoveTo, err = p.header(moveTo); err != nil {
			return op, err
		}
	}
	var cur *Chunk
	flush := func() {
		if cur != nil && (len(cur.Old) > 0 || len(cur.New) > 0 || cur.Context != "") {
			op.Chunks = append(op.Chunks, *cur)
		}
		cur = nil
	}
	for p.i < len(p.lines) && !p.atSection() {
		l := p.lines[p.i]
		n := p.i + 1
		p.i++
		switch {
		case l == chunkMarker || strings.HasPrefix(l, chunkMarker+" "):
			flush()
			ctx := strings.TrimPrefix(strings.TrimPrefix(l, chunkMarker), " ")
			if strings.HasPrefix(ctx, "-") && strings.Contains(ctx, " @@") {
				ctx = "" // a unified "@@ -1,2 +1,3 @@" header: no context line
			}
			cur = &Chunk{Context: ctx, Line: n}
		case strings.TrimSpace(l) == endOfFile:
			if cur == nil {
				return op, parseErr(n, "%q outside a hunk", endOfFile)
			}
			cur.EOF = true
			flush()
		case l == "" || l[0] == ' ' || l[0] == '-' || l[0] == '+':
			if l == "" && p.onlyBlankUntilSection() {
				continue // trailing blank lines before the next section
			}
			if cur == nil {
				if len(op.Chunks) > 0 {
					return op, parseErr(n, "hunk lines after \"*** End of File\" need a new \"@@\" line")
				}
				cur = &Chunk{Line: n} // the first hunk may omit "@@"
			}
			switch {
			case l == "":
				cur.Old = append(cur.Old, "")
				cur.New = append(cur.New, "")
				cur.Kinds += " "
			case l[0] == ' ':
				cur.Old = append(cur.Old, l[1:])
				cur.New = append(cur.New, l[1:])
				cur.Kinds += " "
			case l[0] == '-':
				cur.Old = append(cur.Old, l[1:])
				cur.Kinds += "-"
			default:
				cur.New = append(cur.New, l[1:])
				cur.Kinds += "+"
			}
		default:
			return op, parseErr(n, "in \"*** Update File: %s\" hunk lines must start with \" \", \"-\" or \"+\" (or be \"@@ …\"), got %q", path, clip(l))
		}
	}
	flush()
	if len(op.Chunks) == 0 && op.MoveTo == "" {
		return op, parseErr(op.Line, "\"*** Update File: %s\" has no hunks", path)
	}
	return op, nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
