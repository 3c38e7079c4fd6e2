package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// Limits of a search.
const (
	DefaultMaxResults = 200
	MaxMaxResults     = 2000
	MaxContext        = 10
	maxLineBytes      = 300      // a longer line is clipped
	maxFileSize       = 64 << 20 // bigger files are skipped
	readChunk         = 64 << 10 // first read; binary check happens on it
)

// Query is one grep request.
type Query struct {
	Pattern    string   // RE2 syntax (Go regexp)
	Path       string   // file or directory, relative to the workspace root; "" for the root
	Globs      []string // include globs; "!glob" excludes
	IgnoreCase bool
	MaxResults int // matching lines; 0 means DefaultMaxResults
	Context    int // lines before and after each match
	Workers    int // 0 means GOMAXPROCS

	onVisit func(rel string) // tests: called for each entry the walk visits
}

// Line is one line of the result: a match or a context line.
type Line struct {
	Path    string `json:"path"` // slash-separated, relative to the workspace root (absolute in a granted directory)
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Context bool   `json:"context,omitempty"`
}

// Result is the outcome of a search.
type Result struct {
	Lines     []Line // by file in walk order (sorted by path), then by line
	Matches   int    // matching lines in Lines
	Files     int    // files with a match in Lines
	Truncated bool   // more matches exist than Lines shows
	Searched  int    // files read
	// IgnoreNote says that the walk's ignore rules were truncated (package
	// ignore's bounds) and that files below the directories it names were
	// not searched; "" when they were not.
	IgnoreNote string
}

// fileResult is what one worker found in one file.
type fileResult struct {
	lines []Line
	hits  int
	more  bool // the file had more matches than its cap
}

var noMatch = &fileResult{}

type job struct {
	seq  int
	rel  string  // slash-separated, relative to run.root
	dir  *dirRef // the open directory that holds it (nil: open rel through the root); the job holds a reference
	name string  // the file's name in dir
}

// run is the state of one search.
type run struct {
	q       Query
	m       *matcher
	globs   *globFilter
	base    string   // the workspace root, or the granted directory searched
	root    *os.Root // base: the start, the ignore files above it and single files are opened through it
	prefix  string   // display prefix for rel paths ("" inside the workspace)
	perFile int
	ctx     context.Context
	stop    context.CancelFunc // ends the walk once enough results are in
	ignores *ignore.Walk       // the walk's ignore files and their bounds; used by the walk goroutine only

	mu       sync.Mutex
	slots    []*fileResult // guarded by mu; by walk order, nil until searched
	doneUpTo int           // guarded by mu; slots[:doneUpTo] are all searched
	hitsUpTo int           // guarded by mu; matches in slots[:doneUpTo]
	searched int           // guarded by mu
}

// Grep searches the workspace for q. The walk runs on one goroutine and
// the files are searched by q.Workers goroutines; all have ended when Grep
// returns. Results are deterministic: the first MaxResults matches in path
// order, whatever order the workers finish in.
func Grep(ctx context.Context, ws *confine.Workspace, q Query) (*Result, error) {
	if q.MaxResults <= 0 {
		q.MaxResults = DefaultMaxResults
	}
	q.Context = max(0, min(q.Context, MaxContext))
	if q.Workers <= 0 {
		q.Workers = runtime.GOMAXPROCS(0)
	}
	m, err := newMatcher(q.Pattern, q.IgnoreCase)
	if err != nil {
		return nil, err
	}
	globs, err := newGlobFilter(q.Globs)
	if err != nil {
		return nil, err
	}
	start, err := ws.Resolve(q.Path, false)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(start)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("path %q: %w", q.Path, tools.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if kind := confine.SpecialKind(fi.Mode()); kind != "" {
		return nil, tools.Errorf("special_file", "%w: grep %s: %w: it is a %s; grep searches regular files and directories", tools.ErrInvalidArgs, q.Path, confine.ErrSpecialFile, kind)
	}
	r := &run{q: q, m: m, globs: globs, base: ws.Root(), perFile: max(q.MaxResults/4, 25)}
	if !confine.Within(r.base, start) { // a granted directory
		r.base = start
		if !fi.IsDir() {
			r.base = filepath.Dir(start)
		}
		r.prefix = filepath.ToSlash(r.base) + "/"
	}
	rel, err := filepath.Rel(r.base, start)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	// The walk starts through an os.Root on the base and goes on from
	// directory descriptors, so a directory swapped for a link during the
	// walk cannot lead it out.
	if r.root, err = os.OpenRoot(r.base); err != nil {
		return nil, err
	}
	defer r.root.Close()
	walkCtx, stop := context.WithCancel(ctx)
	defer stop()
	r.ctx, r.stop = walkCtx, stop

	if !fi.IsDir() {
		r.perFile = q.MaxResults
		r.slots = []*fileResult{nil}
		if _, err := r.readFile(rel, nil); errors.Is(err, confine.ErrSpecialFile) {
			return nil, tools.Errorf("special_file", "%w: grep %s: %w", tools.ErrInvalidArgs, q.Path, err)
		}
		r.searchFile(job{rel: rel}, make([]byte, readChunk))
		return r.result()
	}
	jobs := make(chan job, 256)
	var wg sync.WaitGroup
	for range q.Workers {
		wg.Go(func() {
			buf := make([]byte, readChunk)
			for j := range jobs {
				if walkCtx.Err() != nil {
					j.dir.release()
					continue // drain
				}
				buf = r.searchFile(j, buf)
			}
		})
	}
	r.ignores = ignore.NewWalk()
	rules := r.startRules(rel) // an ignored directory named explicitly is searched, by the rules
	if d, err := r.openStart(rel); err == nil {
		r.walk(d, rel, rules, jobs)
		d.release()
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.result()
}

// walk sends the files below the open directory d (at rel) in sorted
// order, depth first. Subdirectories and files are opened relative to d,
// one name at a time, never following a link: a directory swapped for a
// link mid-walk cannot lead out.
//
// The ctx is checked before each entry: no entry is visited once the
// search is cancelled. Files below a directory whose ignore rules were not
// loaded whole (ignore.Rules.Complete) are not read: they may be what
// those rules exclude.
func (r *run) walk(d *dirRef, rel string, rules *ignore.Rules, jobs chan<- job) {
	if r.ctx.Err() != nil {
		return
	}
	entries, err := d.f.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		return // unreadable directories are skipped, as by rg
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if r.ctx.Err() != nil {
			return
		}
		name := e.Name()
		if r.q.onVisit != nil {
			r.q.onVisit(joinRel(rel, name))
		}
		typ := e.Type()
		if typ&os.ModeSymlink != 0 {
			continue // never followed: a link may point out of the workspace
		}
		erel := name
		if rel != "" {
			erel = rel + "/" + name
		}
		switch {
		case typ.IsDir():
			if rules.Skip(erel, true) {
				continue
			}
			sub, err := r.openDirAt(d, erel, name)
			if err != nil {
				continue
			}
			r.walk(sub, erel, r.ignores.Enter(rules, erel, r.ignoreOpener(sub, erel)), jobs)
			sub.release()
			if r.ctx.Err() != nil {
				return
			}
		case typ.IsRegular():
			if rules.Skip(erel, false) || (!r.globs.empty() && !r.globs.match(erel)) || !rules.Complete() {
				continue
			}
			r.mu.Lock()
			seq := len(r.slots)
			r.slots = append(r.slots, nil)
			r.mu.Unlock()
			d.acquire()
			select {
			case jobs <- job{seq: seq, rel: erel, dir: d, name: name}:
			case <-r.ctx.Done():
				d.release()
				return
			}
		}
	}
}

// searchFile searches one file and records the result in its slot. buf is
// the worker's read buffer; the (maybe grown) buffer is returned.
func (r *run) searchFile(j job, buf []byte) []byte {
	var data []byte
	var err error
	if j.dir != nil {
		data, err = r.readAt(j.dir, j.rel, j.name, &buf)
		j.dir.release()
	} else {
		data, err = r.readFile(j.rel, &buf)
	}
	res := noMatch
	if err == nil && !isBinary(data) {
		res = r.matchFile(data, r.prefix+j.rel)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots[j.seq] = res
	if err == nil {
		r.searched++
	}
	for r.doneUpTo < len(r.slots) && r.slots[r.doneUpTo] != nil {
		r.hitsUpTo += r.slots[r.doneUpTo].hits
		r.doneUpTo++
	}
	if r.hitsUpTo >= r.q.MaxResults {
		r.stop()
	}
	return buf
}

var errSkip = errors.New("skipped")

type hit struct{ line, start, end int }

// matchFile finds the matches of data (the file at display path p).
func (r *run) matchFile(data []byte, p string) *fileResult {
	var hits []hit
	more := false
	r.m.scan(data, func(line, start, end int) bool {
		if len(hits) == r.perFile {
			more = true
			return false
		}
		hits = append(hits, hit{line, start, end})
		return true
	})
	if len(hits) == 0 {
		return noMatch
	}
	res := &fileResult{hits: len(hits), more: more, lines: make([]Line, 0, len(hits)*(1+2*r.q.Context))}
	last := 0 // last line number emitted
	for i, h := range hits {
		if c := r.q.Context; c > 0 {
			// Lines before h, not already emitted.
			var before []Line
			s, ln := h.start, h.line
			for k := 0; k < c && s > 0 && ln-1 > last; k++ {
				e := s - 1
				s = bytes.LastIndexByte(data[:e], '\n') + 1
				ln--
				before = append(before, Line{Path: p, Line: ln, Text: clipLine(trimCR(data[s:e]), maxLineBytes), Context: true})
			}
			for k := len(before) - 1; k >= 0; k-- {
				res.lines = append(res.lines, before[k])
			}
		}
		res.lines = append(res.lines, Line{Path: p, Line: h.line, Text: clipLine(trimCR(data[h.start:h.end]), maxLineBytes)})
		last = h.line
		if c := r.q.Context; c > 0 {
			next := int(^uint(0) >> 1)
			if i+1 < len(hits) {
				next = hits[i+1].line
			}
			e := h.end
			for k := 0; k < c && e < len(data) && last+1 < next; k++ {
				s := e + 1
				if s >= len(data) {
					break
				}
				e = bytes.IndexByte(data[s:], '\n')
				if e < 0 {
					e = len(data)
				} else {
					e += s
				}
				last++
				res.lines = append(res.lines, Line{Path: p, Line: last, Text: clipLine(trimCR(data[s:e]), maxLineBytes), Context: true})
			}
		}
	}
	return res
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// result assembles the first MaxResults matches in walk order.
func (r *run) result() (*Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{Searched: r.searched}
	if r.ignores != nil {
		res.IgnoreNote = r.ignores.Note("grep did not search the files below them")
	}
	for _, fr := range r.slots {
		if fr == nil { // not searched: the walk stopped after enough matches
			res.Truncated = true
			break
		}
		if fr.hits == 0 {
			continue
		}
		if res.Matches == r.q.MaxResults {
			res.Truncated = true
			break
		}
		res.Files++
		for _, l := range fr.lines {
			if !l.Context {
				if res.Matches == r.q.MaxResults {
					res.Truncated = true
					break
				}
				res.Matches++
			}
			res.Lines = append(res.Lines, l)
		}
		if fr.more {
			res.Truncated = true
		}
	}
	return res, nil
}
