package git

import (
	"strconv"
	"strings"
)

// Status is the parsed `git status --porcelain=v2 -z --branch`.
type Status struct {
	Branch    string        `json:"branch"`             // "(detached)" when HEAD is detached
	Head      string        `json:"head,omitempty"`     // commit id; "(initial)" before the first commit
	Upstream  string        `json:"upstream,omitempty"` // e.g. origin/main
	Ahead     int           `json:"ahead,omitempty"`
	Behind    int           `json:"behind,omitempty"`
	Clean     bool          `json:"clean"`
	Entries   []StatusEntry `json:"entries"`
	Truncated bool          `json:"truncated,omitempty"`
}

// StatusEntry is one changed or untracked path.
type StatusEntry struct {
	Path     string `json:"path"`
	OrigPath string `json:"orig_path,omitempty"` // renames and copies
	Staged   string `json:"staged,omitempty"`    // index vs HEAD
	Unstaged string `json:"unstaged,omitempty"`  // work tree vs index
	State    string `json:"state"`               // changed, renamed, unmerged, untracked
}

// ParseStatus parses porcelain v2 output with -z. Unknown or malformed
// records are skipped.
func ParseStatus(b []byte) Status {
	st := Status{Entries: []StatusEntry{}}
	recs := strings.Split(string(b), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			parseHeader(&st, rec)
		case '1': // 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(rec, " ", 9)
			if len(f) == 9 && len(f[1]) == 2 {
				st.Entries = append(st.Entries, entry(f[1], f[8], "", "changed"))
			}
		case '2': // 2 XY sub mH mI mW hH hI Xscore path \0 origPath
			f := strings.SplitN(rec, " ", 10)
			if len(f) == 10 && len(f[1]) == 2 && i+1 < len(recs) {
				i++
				st.Entries = append(st.Entries, entry(f[1], f[9], recs[i], "renamed"))
			}
		case 'u': // u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := strings.SplitN(rec, " ", 11)
			if len(f) == 11 && len(f[1]) == 2 {
				e := entry(f[1], f[10], "", "unmerged")
				e.Staged, e.Unstaged = "unmerged", "unmerged"
				st.Entries = append(st.Entries, e)
			}
		case '?':
			if len(rec) > 2 {
				st.Entries = append(st.Entries, StatusEntry{Path: rec[2:], State: "untracked"})
			}
		}
	}
	st.Clean = len(st.Entries) == 0
	return st
}

func parseHeader(st *Status, rec string) {
	f := strings.Fields(rec)
	if len(f) < 3 {
		return
	}
	switch f[1] {
	case "branch.oid":
		st.Head = f[2]
	case "branch.head":
		st.Branch = f[2]
	case "branch.upstream":
		st.Upstream = f[2]
	case "branch.ab":
		if len(f) >= 4 {
			st.Ahead, _ = strconv.Atoi(strings.TrimPrefix(f[2], "+"))
			b, _ := strconv.Atoi(strings.TrimPrefix(f[3], "-"))
			st.Behind = b
		}
	}
}

func entry(xy, path, orig, state string) StatusEntry {
	return StatusEntry{Path: path, OrigPath: orig, Staged: change(xy[0]), Unstaged: change(xy[1]), State: state}
}

// change names a porcelain status letter; "" for unchanged.
func change(c byte) string {
	switch c {
	case 'M':
		return "modified"
	case 'T':
		return "type_changed"
	case 'A':
		return "added"
	case 'D':
		return "deleted"
	case 'R':
		return "renamed"
	case 'C':
		return "copied"
	case 'U':
		return "unmerged"
	}
	return ""
}
