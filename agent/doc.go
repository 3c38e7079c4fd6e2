// Package agent is the default wiring of an engine (the manual's
// createDefaultEngine / createEngine = agent.NewDefault): it builds an
// engine.Engine with the OpenAI-compatible provider from the environment
// (unless one is given), every builtin tool (files, shell, search, web,
// git, diff, interactive, todo, media, terminals, explore), ConflictGuard,
// permissions with the OS sandbox, the default system prompt and, when
// asked, per-turn git snapshots. The core engine package knows none of
// these concretes; hosts that want another set of tools build their own
// engine with engine.New.
//
// NewDefault starts nothing that outlives the engine: the shell manager
// is closed by Engine.Close.
package agent
