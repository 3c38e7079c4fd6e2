package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errQuit ends the chat.
var errQuit = errors.New("quit")

// command is one of the chat's slash commands.
type command struct {
	name  string // "/mode"
	alias string // another name, or ""
	args  string // how its argument is written in /help
	help  string
	run   func(ch *chat, ctx context.Context, arg string) error // a method expression of *chat
}

// commands are listed by /help in this order (set in init: /help reads
// the list).
var commands []command

func init() {
	commands = []command{
		{name: "/help", help: "this list", run: func(ch *chat, _ context.Context, _ string) error {
			printHelp(ch.out)
			return nil
		}},
		{name: "/mode", args: "[discuss|plan|interactive|auto]", help: "show or change the permission mode", run: (*chat).setMode},
		{name: "/model", args: "[name]", help: "show or change the model", run: (*chat).setModel},
		{name: "/retry", help: "run the model again after a turn that ended in a retriable error", run: (*chat).retry},
		{name: "/grants", help: "what this session may do without asking", run: (*chat).grants},
		{name: "/new", help: "start a new session in this project", run: (*chat).newSession},
		{name: "/quit", alias: "/exit", help: "leave (also Ctrl-D)", run: func(*chat, context.Context, string) error { return errQuit }},
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "Type a message to start a turn. Commands:")
	for _, c := range commands {
		name := c.name
		if c.alias != "" {
			name += ", " + c.alias
		}
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(w, "  %-42s %s\n", name, c.help)
	}
	fmt.Fprintf(w, "  %-42s %s\n", "Ctrl-C", "stop the running turn (at the prompt: leave)")
	fmt.Fprintln(w, "While a turn runs, questions and approvals are answered at the prompts it shows.")
}

// slash runs a slash command line; handled is false when line is a message.
func (ch *chat) slash(ctx context.Context, line string) (handled bool, err error) {
	if !strings.HasPrefix(line, "/") {
		return false, nil
	}
	name, arg, _ := strings.Cut(line, " ")
	for _, c := range commands {
		if name == c.name || (c.alias != "" && name == c.alias) {
			return true, c.run(ch, ctx, strings.TrimSpace(arg))
		}
	}
	fmt.Fprintf(ch.out, "unknown command %s; /help lists the commands\n", safeText(name))
	return true, nil
}

// session is the part of the session object the commands show.
type session struct {
	Mode  string `json:"mode"`
	Model string `json:"model"`
}

func (ch *chat) setMode(ctx context.Context, arg string) error {
	if arg == "" {
		var got struct {
			Session session `json:"session"`
		}
		if err := ch.c.Call(ctx, "session.get", map[string]string{"sessionId": ch.sessionID}, &got); err != nil {
			return err
		}
		fmt.Fprintf(ch.out, "mode: %s (discuss, plan, interactive or auto)\n", got.Session.Mode)
		return nil
	}
	var s session
	if err := ch.c.Call(ctx, "session.setMode", map[string]string{"sessionId": ch.sessionID, "mode": arg}, &s); err != nil {
		fmt.Fprintln(ch.out, "mode not changed:", err)
		return nil
	}
	fmt.Fprintf(ch.out, "mode: %s\n", s.Mode)
	return nil
}

func (ch *chat) setModel(ctx context.Context, arg string) error {
	if arg == "" {
		var got struct {
			Session session `json:"session"`
		}
		if err := ch.c.Call(ctx, "session.get", map[string]string{"sessionId": ch.sessionID}, &got); err != nil {
			return err
		}
		m := got.Session.Model
		if m == "" {
			m = "(the provider's default)"
		}
		fmt.Fprintf(ch.out, "model: %s\n", m)
		return nil
	}
	var s session
	if err := ch.c.Call(ctx, "session.setModel", map[string]string{"sessionId": ch.sessionID, "model": arg}, &s); err != nil {
		fmt.Fprintln(ch.out, "model not changed:", err)
		return nil
	}
	fmt.Fprintf(ch.out, "model: %s (from the next model request)\n", safeText(s.Model))
	return nil
}

func (ch *chat) retry(ctx context.Context, _ string) error {
	if err := ch.c.Call(ctx, "turn.retry", map[string]string{"sessionId": ch.sessionID}, nil); err != nil {
		fmt.Fprintln(ch.out, "nothing to retry:", err)
		return nil
	}
	return ch.followTurn(ctx)
}

func (ch *chat) grants(ctx context.Context, _ string) error {
	var res struct {
		Grants []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"grants"`
	}
	if err := ch.c.Call(ctx, "session.grants", map[string]string{"sessionId": ch.sessionID}, &res); err != nil {
		return err
	}
	if len(res.Grants) == 0 {
		fmt.Fprintln(ch.out, "no grants: every call that needs approval asks")
		return nil
	}
	for _, g := range res.Grants {
		what := "the tool " + safeText(g.Name)
		if g.Kind == "command" {
			what = "the command " + safeText(g.Name)
		}
		fmt.Fprintf(ch.out, "  always allowed: %s\n", what)
	}
	return nil
}

func (ch *chat) newSession(ctx context.Context, _ string) error {
	id, err := ch.c.CreateSession(ctx, ch.projectID, ch.sessionExtra)
	if err != nil {
		return err
	}
	if err := ch.c.Call(ctx, "session.unsubscribe", map[string]string{"sessionId": ch.sessionID}, nil); err != nil {
		return err
	}
	if _, err := ch.c.Subscribe(ctx, id, 0); err != nil {
		return err
	}
	ch.sessionID = id
	fmt.Fprintln(ch.out, "new session", id)
	return nil
}
