package gitenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// inertConfig are the command-scope settings of every inert git run. Each
// either names nothing to run or a program that cannot run (os.DevNull).
var inertConfig = []string{
	"core.hooksPath=" + os.DevNull, // no hook, reference-transaction included
	"core.fsmonitor=false",
	"core.pager=cat",
	"core.editor=:",
	"core.askPass=",
	"core.sshCommand=ssh",
	"credential.helper=", // an empty helper resets the list, URL-scoped ones too
	"gpg.program=" + os.DevNull,
	"gpg.openpgp.program=" + os.DevNull,
	"gpg.x509.program=" + os.DevNull,
	"gpg.ssh.program=" + os.DevNull,
	"gpg.ssh.defaultKeyCommand=" + os.DevNull,
	"log.showSignature=false",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"push.gpgSign=false",
	"core.attributesFile=" + os.DevNull,
	"protocol.ext.allow=never",
	// The local transport runs remote.<name>.uploadpack, whose first value
	// wins and so cannot be overridden: no local transport at all.
	"protocol.file.allow=never",
	"gc.auto=0",
	"maintenance.auto=false",
	// No submodule recursion: a nested git would read the submodule's own
	// config and attributes (a clean filter Open never saw) or another
	// repository its .git file names. These settings travel in
	// GIT_CONFIG_COUNT, which every nested git inherits. A .gitmodules or
	// config submodule.<name>.ignore beats diff.ignoreSubmodules: Open
	// overrides each one it finds (submoduleIgnores).
	"diff.ignoreSubmodules=all",
	"diff.submodule=short",
	"status.submoduleSummary=false",
	"submodule.recurse=false",
	"fetch.recurseSubmodules=false",
	"push.recurseSubmodules=no",
}

// inertVars are the environment variables of every inert git run (after
// every inherited GIT_* variable is dropped). Variables win over config.
var inertVars = []string{
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=" + os.DevNull,
	"GIT_ATTR_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_ASKPASS=",
	"GIT_PAGER=cat",
	"GIT_EDITOR=:",
	"GIT_SEQUENCE_EDITOR=:",
	"GIT_SSH_COMMAND=ssh",
	"GIT_PROXY_COMMAND=", // set and empty: core.gitProxy is not consulted
}

// Repo is a git repository confined to a project, as inert runs see it.
type Repo struct {
	// Project is the project folder; discovery never goes above it.
	Project string
	// GitDir is the pinned GIT_DIR; "" pins none (git may only find a
	// repository inside the project).
	GitDir string
	// WorkTree is the pinned GIT_WORK_TREE; used only with GitDir.
	WorkTree string
	// blank are the name-keyed settings of the repository's config that
	// Env overrides ("key=value").
	blank []string
	// ownIdentity: the repository's config sets user.name or user.email.
	ownIdentity bool
	// identity are the user's GIT_AUTHOR_*/GIT_COMMITTER_* variables
	// (Commands only).
	identity []string
	// roots are the folders the repository may lead to: the project, and
	// for a confirmed repository (OpenConfirmed) its git and common dirs
	// and work tree; nil is the project alone.
	roots []string
}

// Blanked lists the name-keyed settings of the repository that Env
// overrides, as "key=value" (for tests and logs).
func (r Repo) Blanked() []string { return append([]string(nil), r.blank...) }

// Env returns base without any GIT_* variable, plus the inert environment
// for r: the variables above, GIT_DIR, GIT_WORK_TREE and
// GIT_CEILING_DIRECTORIES, and GIT_CONFIG_COUNT/KEY/VALUE holding the inert
// settings, r's blanked settings and then config ("key=value", e.g. a
// caller's core.quotePath=false), in that order, later winning. base should
// already be free of secrets.
func (r Repo) Env(base []string, config ...string) []string {
	env := make([]string, 0, len(base)+len(inertVars)+8+3*(len(inertConfig)+len(r.blank)+len(config)))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, inertVars...)
	env = append(env, r.identity...)
	if r.Project != "" {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(r.Project))
	}
	if r.GitDir != "" {
		env = append(env, "GIT_DIR="+r.GitDir)
		if r.WorkTree != "" {
			env = append(env, "GIT_WORK_TREE="+r.WorkTree)
		}
	}
	n := 0
	for l, list := range [][]string{inertConfig, r.blank, config} {
		for _, kv := range list {
			key, value, _ := strings.Cut(kv, "=")
			if l == 1 {
				// A blanked key's name may hold "=" (filter."a=b".clean);
				// its value never does.
				i := strings.LastIndexByte(kv, '=')
				key, value = kv[:i], kv[i+1:]
			}
			i := strconv.Itoa(n)
			env = append(env, "GIT_CONFIG_KEY_"+i+"="+key, "GIT_CONFIG_VALUE_"+i+"="+value)
			n++
		}
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
}
