package main

import (
	"flag"
	"fmt"
	"io"
)

// envHelp lists every environment variable the sidecar reads, for --help.
// Keep it in step with the code (TestHelpListsEnv greps the sources).
var envHelp = [][2]string{
	{"ZQAGENT_TOKEN", "the WebSocket token (removed from the environment at start; default: a random 256-bit one); prefer --secrets-stdin"},
	{"ZQAGENT_SCRIPT", "a script file for the scripted provider (UI development and tests without a model)"},
	{"ZQAGENT_MODEL", "the model of the default profile (else OPENAI_MODEL)"},
	{"ZQAGENT_AUDIT_LOG_DIR", "same as --audit-log-dir"},
	{"ZQAGENT_MCP_LAZY", "1 or 0: force MCP lazy tool loading on or off (default: on when the tools are large)"},
	{"ZQAGENT_CPUPROFILE", "write a CPU profile of the whole run to this file (a build with -tags zqprofile only; make bench)"},
	{"ZQAGENT_HEAPPROFILE", "write a heap profile to this file when the exit is requested (-tags zqprofile only)"},
	{"OPENAI_API_KEY", "the default profile's API key (<PROFILE>_API_KEY for other profiles; removed at start); the keychain wins (read once, 3 s bound); prefer --secrets-stdin"},
	{"OPENAI_BASE_URL", "an OpenAI-compatible endpoint (default https://api.openai.com/v1)"},
	{"OPENAI_MODEL", "the default model"},
	{"OPENAI_FORCE_API_MODE", "responses or chat: skip the Responses-API probe"},
	{"OPENAI_REASONING_EFFORT", "low, medium or high, for reasoning models"},
	{"OPENAI_MAX_RETRIES", "retries of a 429/5xx model response (these five: a provider profile's retry overrides them)"},
	{"OPENAI_TIMEOUT_MS", "the wait for a model response's headers"},
	{"OPENAI_STREAM_IDLE_MS", "a stream silent this long is aborted"},
	{"NETWORK_RETRY_MAX", "retries of a network error"},
	{"NETWORK_RETRY_BASE_MS", "the first retry's back-off (doubling)"},
	{"SOCKS5_PROXY", "socks5://host:port for outgoing requests: the model, web_fetch, web_search and media URLs"},
	{"CONTEXT_WINDOW", "the model's context window in tokens"},
	{"COMPACTION_MODEL", "the model that writes compaction summaries"},
	{"COMPACTION_REASONING_EFFORT", "its reasoning effort"},
	{"COMPACTION_THRESHOLD_PCT", "share of the window that triggers compaction (0-1)"},
	{"COMPACTION_SOFT_THRESHOLD_PCT", "share that triggers background compaction (0-1)"},
	{"COMPACTION_CAP_TOKENS", "upper bound of the compacted context"},
	{"COMPACTION_ELIDE", "0: do not elide old tool output"},
	{"COMPACTION_DEDUP", "0: do not deduplicate repeated file reads"},
	{"MAX_ITERATIONS", "model rounds per turn"},
	{"EXPLORE_MAX_ITERATIONS", "model rounds of the explore subagent"},
	{"TOOL_RESULT_MAX_CHARS", "a tool result longer than this is cut"},
	{"TOOL_RESULT_SAVE_THRESHOLD", "a tool result longer than this is spilled to a file"},
	{"TOOL_RESULT_DIR", "where spilled tool results go, in a folder per session (default: the session's folder); the session's read_file can read them"},
	{"MCP_CALL_TIMEOUT_MS", "timeout of one MCP tool call"},
	{"LC_ALL, LC_MESSAGES, LANG", "the language of new sessions when the shell's initialize names no locale (else the OS's preferred language, else English)"},
	{"SHELL", "the login shell of PTY terminals (never used for run_shell)"},
	{"DBUS_SESSION_BUS_ADDRESS", "Linux: the session bus of the Secret Service keychain (never autolaunched)"},
	{"XDG_CONFIG_HOME", "where git's global config (the user's identity for auto-allowed commits) is read"},
	{"XDG_RUNTIME_DIR", "Linux: $XDG_RUNTIME_DIR/bus is the session bus when DBUS_SESSION_BUS_ADDRESS is unset"},
}

func usage(fs *flag.FlagSet, w io.Writer) func() {
	return func() {
		fmt.Fprintf(w, "Usage: sidecar [flags]\n\n"+
			"The zqagent sidecar: a desktop shell spawns it, reads the one ready line it\n"+
			"prints on stdout, connects to the WebSocket named there and keeps stdin open\n"+
			"(EOF means exit). See ui-protocol.md.\n\n"+
			"sidecar acp [flags] speaks the Agent Client Protocol on stdin/stdout instead,\n"+
			"for editors (Zed, JetBrains); see the README.\n\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nEnvironment:\n")
		for _, e := range envHelp {
			fmt.Fprintf(w, "  %-30s %s\n", e[0], e[1])
		}
	}
}

// acpUsage is `sidecar acp --help`.
func acpUsage(fs *flag.FlagSet, w io.Writer) func() {
	return func() {
		fmt.Fprintf(w, "Usage: sidecar acp [flags]\n\n"+
			"Speaks the Agent Client Protocol (ACP v1) on stdin/stdout, for editors\n"+
			"(Zed, JetBrains, …): the editor spawns it as an agent. stdout carries only\n"+
			"the protocol; logs go to stderr. It hosts the same agent as the desktop\n"+
			"sidecar, with the same data dir, keychain, providers and trust rules.\n\n"+
			"One data dir, two front doors:\n"+
			"  - started alone, it owns the data dir (its lock) and publishes its\n"+
			"    endpoint; a desktop sidecar started later asks it to hand the data dir\n"+
			"    over: sidecar acp closes its server (a turn waiting for an approval is\n"+
			"    suspended, still answerable) and drives the desktop sidecar from then on;\n"+
			"  - started while a desktop sidecar (or another sidecar acp) runs on the data\n"+
			"    dir, it drives that one; when that one quits, it takes the data dir over.\n"+
			"  The editor's sessions and pending approvals carry over either way.\n\n"+
			"ACP methods: initialize, session/new, session/load, session/list,\n"+
			"session/prompt, session/cancel, session/set_mode. MCP servers passed in\n"+
			"session/new or session/load (stdio, http, sse) belong to that session only:\n"+
			"never written to the project or stored, stopped when sidecar acp exits. Like\n"+
			"the project's servers, none starts before the user allowed it: the first\n"+
			"prompt asks (session/request_permission, naming the command line or URL and\n"+
			"only the names of env variables and headers); \"always\" is remembered for\n"+
			"the project and that exact config. A new session's language is session/new's\n"+
			"_meta {\"zqagent\":{\"lang\":\"ja\"}} (or _meta {\"lang\"}; zh, en, zh-TW,\n"+
			"ja, ko or es), else the OS locale (LC_ALL, LC_MESSAGES, LANG), else English.\n\n"+
			"--secrets-stdin is not available (stdin carries the protocol): API keys come\n"+
			"from the keychain or *_API_KEY.\n\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nEnvironment: as for sidecar (sidecar --help).\n")
	}
}
