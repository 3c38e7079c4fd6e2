package git

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed git_log.md
var gitLogDescription string

const (
	defaultLogCount = 20
	maxLogCount     = 200
)

type gitLogArgs struct {
	Ref      string `json:"ref" jsonschema_description:"Branch, tag, commit or range (default HEAD)."`
	Path     string `json:"path" jsonschema_description:"Only commits touching this path (relative to the workspace root)."`
	MaxCount int    `json:"max_count" jsonschema:"minimum=1,maximum=200" jsonschema_description:"Number of commits (default 20)."`
}

// Commit is one entry of git_log.
type Commit struct {
	Hash    string `json:"hash"`
	Short   string `json:"short"`
	Author  string `json:"author"`
	Email   string `json:"email"`
	Date    string `json:"date"`
	Subject string `json:"subject"`
}

// LogResult is the result of git_log.
type LogResult struct {
	Commits []Commit `json:"commits"`
	Note    string   `json:"note,omitempty"`
}

// logFormat separates fields with NUL and commits with RS.
const logFormat = "--format=%H%x00%h%x00%an%x00%ae%x00%aI%x00%s%x1e"

func (r *runner) gitLogSpec() tools.Spec {
	return tools.Spec{
		Name: "git_log",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(gitLogDescription),
			Parameters:  tools.ParamsOf[gitLogArgs](),
		}},
		Meta:    readMeta("path"),
		Handler: r.gitLog,
	}
}

func (r *runner) gitLog(ctx context.Context, call tools.Call) (any, error) {
	var a gitLogArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if a.MaxCount < 0 {
		return nil, fmt.Errorf("%w: max_count must be positive", tools.ErrInvalidArgs)
	}
	n := a.MaxCount
	if n == 0 {
		n = defaultLogCount
	}
	n = min(n, maxLogCount)
	if err := checkRef("ref", a.Ref); err != nil {
		return nil, refused(err)
	}
	if err := r.checkScopedRef(a.Ref); err != nil {
		return nil, refused(err)
	}
	path, err := r.pathspec(a.Path)
	if err != nil {
		return nil, refused(err)
	}
	args := []string{"log", "--no-color", "--no-show-signature", logFormat, "-n", strconv.Itoa(n), "--end-of-options"}
	if a.Ref != "" {
		args = append(args, a.Ref)
	}
	args = append(args, "--")
	if path != "" {
		args = append(args, path)
	} else {
		args = append(args, r.scope()...)
	}
	out, err := r.git(ctx, args...)
	if err != nil {
		if strings.Contains(err.Error(), "does not have any commits yet") {
			return LogResult{Commits: []Commit{}, Note: "the repository has no commits yet"}, nil
		}
		return nil, fmt.Errorf("git_log: %w", err)
	}
	res := LogResult{Commits: parseLog(out.stdout)}
	if out.capped {
		res.Note = "output capped; ask for fewer commits"
	}
	return res, nil
}

// parseLog parses logFormat output; a record cut by the output cap is
// dropped.
func parseLog(b []byte) []Commit {
	commits := []Commit{}
	for _, rec := range strings.Split(string(b), "\x1e") {
		f := strings.Split(strings.TrimLeft(rec, "\n"), "\x00")
		if len(f) != 6 {
			continue
		}
		commits = append(commits, Commit{Hash: f[0], Short: f[1], Author: f[2], Email: f[3], Date: f[4], Subject: f[5]})
	}
	return commits
}

// readMeta is the metadata of the read-only git tools.
func readMeta(pathArgs ...string) tools.Metadata {
	return tools.Metadata{
		Category:     "git",
		RiskLevel:    tools.RiskLow,
		Class:        tools.ClassRead,
		Capabilities: []string{"read", "git"},
		PathArgs:     pathArgs,
	}
}

// RegisterGitTools registers git_log, git_status and git_diff on reg for
// the repository that holds ws's root.
func RegisterGitTools(reg *tools.Registry, ws *confine.Workspace) {
	RegisterConfirmedGitTools(reg, ws, nil)
}

// RegisterConfirmedGitTools is RegisterGitTools for a workspace whose
// repository is a worktree's or an enclosing one that the user confirmed
// (confirmed; nil is RegisterGitTools). In an enclosing repository every
// call is limited to the workspace folder: status and diff list only its
// paths, relative to it, and log only commits that touch it.
func RegisterConfirmedGitTools(reg *tools.Registry, ws *confine.Workspace, confirmed *gitenv.Candidate) {
	r := newRunner(ws, confirmed)
	reg.MustRegister(r.gitLogSpec())
	reg.MustRegister(r.gitStatusSpec())
	reg.MustRegister(r.gitDiffSpec())
}
