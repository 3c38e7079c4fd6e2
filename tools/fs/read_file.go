package fs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

//go:embed read_file.md
var readFileDescription string

// Limits of one read_file call.
const (
	MaxReadLines   = 2000
	MaxReadBytes   = 256 << 10
	MaxLineChars   = 2000
	sniffBytes     = 8 << 10
	hashReadLimit  = 64 << 20 // larger files are not read to the end (no guard record)
	binaryBadRatio = 0.10     // share of invalid UTF-8 bytes that makes a file binary
)

type readFileArgs struct {
	Path      string `json:"path" jsonschema:"required" jsonschema_description:"File path, relative to the workspace root or absolute inside it (or inside a granted directory)."`
	StartLine int    `json:"start_line" jsonschema:"minimum=1" jsonschema_description:"First line to return, 1-based. Default 1."`
	EndLine   int    `json:"end_line" jsonschema:"minimum=1" jsonschema_description:"Last line to return, inclusive. Default: start_line + 1999."`
}

func readFileSpec(ws *confine.Workspace, guard *conflict.Guard) tools.Spec {
	return tools.Spec{
		Name: "read_file",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "read_file",
			Description: readFileDescription,
			Parameters:  tools.ParamsOf[readFileArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "file",
			RiskLevel:    tools.RiskLow,
			Class:        tools.ClassRead,
			Capabilities: []string{"read_file"},
			PathArgs:     []string{"path"},
		},
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a readFileArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			return ReadFile(ctx, ws, guard, a.Path, a.StartLine, a.EndLine)
		},
	}
}

// ReadFile returns lines start..end (1-based, inclusive; 0 for the defaults)
// of the file at p, numbered like `cat -n`, and records the read in guard.
func ReadFile(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, p string, start, end int) (string, error) {
	if start < 0 || end < 0 {
		return "", fmt.Errorf("%w: start_line and end_line must be positive", tools.ErrInvalidArgs)
	}
	if start == 0 {
		start = 1
	}
	if end == 0 {
		end = start + MaxReadLines - 1
	}
	if end < start {
		return "", fmt.Errorf("%w: end_line %d is before start_line %d", tools.ErrInvalidArgs, end, start)
	}
	t, err := Open(ws, p, false)
	if err != nil {
		return "", err
	}
	defer t.Close()
	f, fi, err := confine.OpenRead(t.Root, t.Rel)
	if err != nil {
		return "", mapFSError("read", t.Display, err)
	}
	defer f.Close()
	if fi.IsDir() {
		return "", toolErr(TypeIsDir, ErrIsDir, "%s is a directory; use list_files to see what it holds", t.Display)
	}
	if !fi.Mode().IsRegular() {
		return "", toolErr(TypeBinary, ErrBinary, "%s is not a regular file", t.Display)
	}

	h := &countingHash{Hash: sha256.New()}
	br := bufio.NewReaderSize(io.TeeReader(f, h), 64<<10)
	head, _ := br.Peek(sniffBytes)
	if looksBinary(head) {
		return "", toolErr(TypeBinary, ErrBinary, "%s looks like a binary file (%d bytes); read_file only shows text", t.Display, fi.Size())
	}

	var (
		out       strings.Builder
		line      int
		last      int // last line written
		cut       bool
		truncated bool // stopped by the byte cap
		complete  = true
		scratch   []byte
	)
	for {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		text, more, err := readLine(br, MaxLineChars, &scratch)
		if err == io.EOF && len(text) == 0 && !more {
			break
		}
		if err != nil && err != io.EOF {
			return "", mapFSError("read", p, err)
		}
		line++
		if line >= start && line <= end && !truncated {
			entry := fmt.Sprintf("%6d\t%s", line, bytes.TrimSuffix(text, []byte("\r")))
			if more {
				entry += " … [line cut]"
				cut = true
			}
			if out.Len()+len(entry)+1 > MaxReadBytes && last >= start {
				truncated = true
			} else {
				out.WriteString(entry)
				out.WriteByte('\n')
				last = line
			}
		}
		if err == io.EOF {
			break
		}
		if line >= end && fi.Size() > hashReadLimit {
			complete = false // do not read a huge file to its end
			break
		}
	}
	if complete {
		var sum [sha256.Size]byte
		copy(sum[:], h.Sum(nil))
		guard.RecordSum(t.Real, sum, h.n, fi.ModTime())
	}

	total := line
	switch {
	case total == 0:
		return fmt.Sprintf("[%s is empty]", t.Display), nil
	case start > total && complete:
		return "", fmt.Errorf("%w: start_line %d is past the end of %s (%d lines)", tools.ErrInvalidArgs, start, t.Display, total)
	}
	if cut {
		fmt.Fprintf(&out, "[lines longer than %d characters were cut]\n", MaxLineChars)
	}
	if last < total || !complete {
		of := fmt.Sprintf("of %d", total)
		if !complete {
			of = "of a file too large to count"
		}
		why := ""
		if truncated {
			why = fmt.Sprintf(" (output capped at %d KB)", MaxReadBytes>>10)
		}
		fmt.Fprintf(&out, "[showing lines %d-%d %s%s; call read_file with start_line=%d to read more]\n", start, last, of, why, last+1)
	}
	return out.String(), nil
}

// countingHash counts the bytes it hashes.
type countingHash struct {
	hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.Hash.Write(p)
}

// readLine reads one line without its "\n", keeping at most limit bytes
// (cut at a rune boundary); more reports that the line was longer. The
// result may alias br's buffer: it is valid until the next read.
func readLine(br *bufio.Reader, limit int, scratch *[]byte) (text []byte, more bool, err error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if len(chunk) <= limit {
			return chunk, false, err
		}
		return cutRunes(chunk[:limit]), true, err
	}
	buf := append((*scratch)[:0], chunk...)
	defer func() { *scratch = buf[:0] }()
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = br.ReadSlice('\n')
		if len(buf) <= limit {
			buf = append(buf, chunk...)
		} else if len(chunk) > 0 {
			more = true
		}
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if len(buf) > limit {
		buf, more = cutRunes(buf[:limit]), true
	}
	return buf, more, err
}

// cutRunes drops a rune cut in half at the end of b.
func cutRunes(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b[max(0, len(b)-utf8.UTFMax):]); i++ {
		b = b[:len(b)-1]
	}
	return b
}

// looksBinary reports NUL bytes or too many invalid UTF-8 sequences.
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if len(b) > utf8.UTFMax {
		b = b[:len(b)-utf8.UTFMax] // a rune may be cut at the sniff boundary
	}
	if len(b) == 0 || utf8.Valid(b) {
		return false
	}
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	return float64(bad)/float64(len(b)) > binaryBadRatio
}
