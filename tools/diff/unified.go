package diff

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// FileDiff is one file of a unified diff.
type FileDiff struct {
	OldName   string // "" for a created file
	NewName   string // "" for a deleted file
	IsNew     bool
	IsDelete  bool
	IsBinary  bool
	Fragments []*gitdiff.TextFragment
}

// hunkHeader matches "@@ -l[,c] +l[,c] @@ ..." and the bare "@@" or "@@ @@"
// that models sometimes write.
var hunkHeader = regexp.MustCompile(`^@@(?: -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)| @@.*|)$`)

// ParseUnified parses a unified diff (git's or diff -u's, one or more
// files). Hunk headers whose line counts do not match their bodies (a
// frequent slip of models) are recounted first, so that no hunk line is
// dropped; bare "@@" headers are accepted and located by content.
func ParseUnified(text string) ([]*FileDiff, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	norm, err := recount(text)
	if err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(strings.NewReader(norm))
	if err != nil {
		return nil, toolErr(TypeParse, ErrParse, "%v", err)
	}
	if len(files) == 0 {
		return nil, toolErr(TypeParse, ErrParse, "no file diffs found; expected \"--- a/path\", \"+++ b/path\" and \"@@ -l,c +l,c @@\" hunks")
	}
	git := strings.HasPrefix(norm, "diff --git ") || strings.Contains(norm, "\ndiff --git ")
	out := make([]*FileDiff, 0, len(files))
	for _, f := range files {
		d := &FileDiff{
			OldName:   f.OldName,
			NewName:   f.NewName,
			IsNew:     f.IsNew,
			IsDelete:  f.IsDelete,
			IsBinary:  f.IsBinary,
			Fragments: f.TextFragments,
		}
		if !git {
			d.OldName, d.NewName = stripPrefix(d.OldName), stripPrefix(d.NewName)
		}
		if d.IsNew {
			d.OldName = ""
		}
		if d.IsDelete {
			d.NewName = ""
		}
		if d.OldName == "" && d.NewName == "" {
			return nil, toolErr(TypeParse, ErrParse, "a file diff names no file")
		}
		out = append(out, d)
	}
	return out, nil
}

func stripPrefix(name string) string {
	if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
		return name[2:]
	}
	return name
}

// recount rewrites every hunk header with the counts of its body. A body
// ends at the next hunk header, a file header ("diff ", or "--- " followed
// by "+++ "), or a line that is not a hunk line. Inside a body an empty line
// is a blank context line (models drop the leading space), unless only
// empty lines follow.
func recount(text string) (string, error) {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		m := hunkHeader.FindStringSubmatch(l)
		if m == nil {
			out = append(out, l)
			continue
		}
		oldStart, newStart, rest := "1", "1", ""
		if m[1] != "" {
			oldStart, newStart, rest = m[1], m[3], m[5]
		}
		var body []string
		var oldN, newN int
		j := i + 1
	body:
		for ; j < len(lines); j++ {
			b := lines[j]
			switch {
			case hunkHeader.MatchString(b), strings.HasPrefix(b, "diff "),
				strings.HasPrefix(b, "--- ") && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "+++ "):
				break body
			case b == "":
				if onlyEmpty(lines[j:]) {
					break body
				}
				b = " "
				fallthrough
			case b[0] == ' ':
				oldN++
				newN++
			case b[0] == '-':
				oldN++
			case b[0] == '+':
				newN++
			case b[0] == '\\':
			default:
				break body
			}
			body = append(body, b)
		}
		if m[1] == "" && oldN == 0 {
			oldStart = "0"
		}
		if oldN > 0 && oldStart == "0" {
			oldStart = "1" // only a creation starts at 0
		}
		if newN == 0 {
			newStart = "0"
		}
		out = append(out, fmt.Sprintf("@@ -%s,%d +%s,%d @@%s", oldStart, oldN, newStart, newN, rest))
		out = append(out, body...)
		i = j - 1
	}
	return strings.Join(out, "\n"), nil
}

func onlyEmpty(lines []string) bool {
	for _, l := range lines {
		if l != "" {
			return false
		}
	}
	return true
}
