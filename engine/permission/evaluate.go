package permission

import (
	"github.com/zqagent/sidecar/tools"
)

func allow(reason string) Decision { return Decision{Allowed: true, Reason: reason} }
func deny(reason string) Decision  { return Decision{Reason: reason} }

// Evaluate decides a tool call in the seed's fixed order (§8.1):
//
//  1. read-only mode (discuss, plan) → side effects are denied
//  2. a path argument outside the workspace and grants → denied
//     (a write that creates or changes <workspace>/.agent/mcp.json or
//     anything inside a .git directory always needs the user, in every mode
//     and whatever the grants — issues 8, 13, 14)
//  3. read-only risk (and interactive tools, which ask the user by nature) → allowed
//  4. AUTO mode → allowed
//  5. shellPolicy with the OS sandbox → the shell may be allowed
//  6. command allowlist / session command grants → allowed
//  7. session tool grants → allowed
//  8. the rest → NeedsUser
//
// toolName is the key of the tool's grants (tools.Spec.GrantName: the
// name of a builtin tool, tools.MCPGrant of an MCP tool, however called).
func (e *Engine) Evaluate(toolName string, args map[string]any, meta tools.Metadata) Decision {
	e.mu.RLock()
	mode, policy := e.mode, e.policy
	e.mu.RUnlock()
	class := meta.Class

	// 1.
	if mode.ReadOnly() && sideEffect(class) {
		return deny("mode " + string(mode) + " is read-only: " + toolName + " (" + classLabel(class) + ") is not allowed")
	}
	// 2.
	if class != tools.ClassInteractive {
		if reason, ok := e.checkPaths(args, meta); !ok {
			return deny(reason)
		}
		if r := e.protectedWrite(toolName, args, meta); r != "" {
			return Decision{NeedsUser: true, Reason: r}
		}
	}
	// 3.
	switch class {
	case tools.ClassRead:
		return allow("read-only tool")
	case tools.ClassInteractive:
		return allow("interactive tool: asks the user itself")
	}
	// 4.
	if mode == ModeAuto {
		return allow("auto mode")
	}
	// 5. and 6.
	if cmd, ok := shellCommand(args, meta); ok {
		if d, ok := e.shellDecision(policy, cmd, args); ok {
			return d
		}
	}
	// 7.
	e.mu.RLock()
	_, granted := e.tools[toolName]
	e.mu.RUnlock()
	if granted {
		return allow("allowed for this session")
	}
	// 8.
	return Decision{NeedsUser: true, Reason: toolName + " (" + classLabel(class) + ") needs approval"}
}

func classLabel(c tools.Class) string {
	if c == "" {
		return "unclassified"
	}
	return string(c)
}

// shellCommand returns the command line of a shell tool call: an exec tool
// with a string "command" argument (run_shell).
func shellCommand(args map[string]any, meta tools.Metadata) (string, bool) {
	if meta.Class != tools.ClassExec {
		return "", false
	}
	cmd, ok := args["command"].(string)
	return cmd, ok && cmd != ""
}

// shellDecision applies steps 5 and 6 to a command line.
func (e *Engine) shellDecision(policy ShellPolicy, cmd string, args map[string]any) (Decision, bool) {
	sb := e.Sandbox()
	switch policy {
	case PolicyAll:
		return allow("shellPolicy all: the shell never asks"), true
	case PolicySandbox:
		if sb.Enforced {
			return allow("shellPolicy sandbox: runs in the " + sb.Kind + " sandbox"), true
		}
	case PolicyWorkspace:
		if sb.Enforced {
			return allow("shellPolicy workspace: runs in the " + sb.Kind + " sandbox"), true
		}
		if e.insideWorkspace(cmd, args) {
			return allow("shellPolicy workspace: every path argument is inside the workspace"), true
		}
	}
	words, _, ok := SafeSimpleCommand(cmd)
	if !ok {
		return Decision{}, false
	}
	if cwd, ok := args["cwd"].(string); ok && e.protectedPath(cwd) != "" {
		return Decision{}, false // a command run inside .git is never auto-allowed
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, entry := range e.allowed {
		if ew := parseAllowEntry(entry); prefixMatch(ew, words) && covers(ew, words) {
			return allow("command allowlist: " + entry), true
		}
	}
	if _, ok := e.commands[words[0]]; ok && covers(words[:1], words) {
		return allow("command " + words[0] + " allowed for this session"), true
	}
	return Decision{}, false
}
