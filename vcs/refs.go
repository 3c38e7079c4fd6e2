package vcs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// refPrefix is where every session's refs live.
const refPrefix = "refs/agent/"

// maxComponent bounds the length of a session's ref component.
const maxComponent = 100

// AgentRef is the ref namespace of a session: refs/agent/<id>, with the id
// made safe for a ref name (the seed's agentRef). The session's newest
// snapshot is <AgentRef>/head and its turns are <AgentRef>/turns/<n>.
func AgentRef(sessionID string) string { return refPrefix + refComponent(sessionID) }

// worktreeRefPrefix is where the sessions of a confirmed linked worktree
// keep their refs: refs/worktree/ is per worktree in git (stored in the
// worktree's own git directory), so two worktrees' agents never see or
// move each other's snapshots.
const worktreeRefPrefix = "refs/worktree/agent/"

// The refs of a session whose namespace is ns (AgentRef, or the
// worktree's).
func headRef(ns string) string { return ns + "/head" }

func turnsPrefix(ns string) string { return ns + "/turns/" }

func turnRef(ns string, n int) string { return turnsPrefix(ns) + strconv.Itoa(n) }

// refComponent maps a session id to one valid ref path component. An id made
// only of letters, digits, '.', '_' and '-' (not starting with '.' or '-',
// without "..", not ending in ".lock" or '.') is kept; any other id is
// replaced by its safe characters plus a hash of the whole id, so that two
// different ids never share refs. The empty id is "default" (the seed's
// default session id).
func refComponent(id string) string {
	if id == "" {
		return "default"
	}
	if validComponent(id) {
		return id
	}
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= 40 {
			break
		}
		if safeByte(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return "x_" + strings.Trim(strings.ReplaceAll(b.String(), "..", "__"), ".") + "-" + hex.EncodeToString(sum[:8])
}

func safeByte(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// validComponent reports whether s can be used as a ref component unchanged.
// Ids starting with "x_" are reserved for the hashed form.
func validComponent(s string) bool {
	if s == "" || len(s) > maxComponent || strings.HasPrefix(s, "x_") {
		return false
	}
	if s[0] == '.' || s[0] == '-' || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if !safeByte(r) {
			return false
		}
	}
	return true
}
