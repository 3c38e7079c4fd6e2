package backend

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/terminal"
)

// The terminal.* methods (SPEC §5) over Options.Terminals. Every call names
// the project and is checked against the terminal's project by the manager:
// a terminal of another project is "not found" (-32002), exactly like an
// unknown id. Streaming (terminal.subscribe) is in terminal_stream.go.

// terminals returns the PTY manager, or a configuration error when the
// server has none.
func (b *Backend) terminals() (*terminal.Manager, error) {
	if b.opts.Terminals == nil {
		return nil, fmt.Errorf("%w: terminals are not available in this sidecar", ErrConfig)
	}
	return b.opts.Terminals, nil
}

// cellCount checks a terminal dimension.
func cellCount(field string, n int) (uint16, error) {
	if n < 1 || n > math.MaxUint16 {
		return 0, protocol.InvalidField(field, fmt.Sprintf("must be between 1 and %d, got %d", math.MaxUint16, n))
	}
	return uint16(n), nil
}

func (b *Backend) projectIsOpen(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.openProjects[id]
	return ok
}

func (b *Backend) CreateTerminal(ctx context.Context, p protocol.TerminalCreateParams) (protocol.Terminal, error) {
	cols, err := cellCount("cols", p.Cols)
	if err != nil {
		return protocol.Terminal{}, err
	}
	rows, err := cellCount("rows", p.Rows)
	if err != nil {
		return protocol.Terminal{}, err
	}
	if len(p.Command) > 0 && p.Command[0] == "" {
		return protocol.Terminal{}, protocol.InvalidField("command", "the program (command[0]) is empty")
	}
	m, err := b.terminals()
	if err != nil {
		return protocol.Terminal{}, err
	}
	pr, err := b.projectOf(ctx, p.ProjectID)
	if err != nil {
		return protocol.Terminal{}, err
	}
	if !b.projectIsOpen(pr.ID) {
		// Like mcp.*: a project that is not open is not found here.
		return protocol.Terminal{}, fmt.Errorf("%w: project %s is not open in this sidecar; call project.open first", ErrNotFound, pr.ID)
	}
	info, err := m.Create(ctx, terminal.CreateOptions{
		ProjectID: pr.ID, ProjectDir: pr.Path, Cwd: p.Cwd, Shell: p.Shell, Command: p.Command,
		Env: p.Env, Cols: cols, Rows: rows, Name: p.Name,
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return protocol.Terminal{}, protocol.InvalidField("cwd", err.Error())
		}
		return protocol.Terminal{}, fmt.Errorf("terminal.create: %w", err)
	}
	// A project.close that ran while the terminal started did not see it.
	if !b.projectIsOpen(pr.ID) {
		_ = m.Kill(pr.ID, info.ID) // it is ours; it cannot be missing
		return protocol.Terminal{}, fmt.Errorf("%w: project %s was closed", ErrNotFound, pr.ID)
	}
	return terminalWire(info), nil
}

// TerminalWriteParams are the params of terminal.write: exactly one of Data
// (UTF-8 text) and DataBase64 (raw bytes).
type TerminalWriteParams protocol.TerminalWriteParams

// writeBytes returns the bytes a terminal.write carries.
func (p TerminalWriteParams) writeBytes() ([]byte, error) {
	switch {
	case p.Data != nil && p.DataBase64 != nil:
		return nil, protocol.InvalidField("data", "give either data or dataBase64, not both")
	case p.Data != nil:
		return []byte(*p.Data), nil
	case p.DataBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*p.DataBase64)
		if err != nil {
			return nil, protocol.InvalidField("dataBase64", "not standard base64: "+err.Error())
		}
		return b, nil
	}
	return nil, protocol.InvalidField("data", "required (or dataBase64)")
}

func (b *Backend) WriteTerminal(ctx context.Context, p protocol.TerminalWriteParams) (protocol.TerminalWriteResult, error) {
	data, err := TerminalWriteParams(p).writeBytes()
	if err != nil {
		return protocol.TerminalWriteResult{}, err
	}
	m, err := b.terminals()
	if err != nil {
		return protocol.TerminalWriteResult{}, err
	}
	if err := m.Write(p.ProjectID, p.TerminalID, data); err != nil {
		return protocol.TerminalWriteResult{}, fmt.Errorf("terminal.write: %w", err)
	}
	return protocol.TerminalWriteResult{Written: len(data)}, nil
}

func (b *Backend) ResizeTerminal(ctx context.Context, p protocol.TerminalResizeParams) (protocol.Terminal, error) {
	cols, err := cellCount("cols", p.Cols)
	if err != nil {
		return protocol.Terminal{}, err
	}
	rows, err := cellCount("rows", p.Rows)
	if err != nil {
		return protocol.Terminal{}, err
	}
	m, err := b.terminals()
	if err != nil {
		return protocol.Terminal{}, err
	}
	if err := m.Resize(p.ProjectID, p.TerminalID, cols, rows); err != nil {
		return protocol.Terminal{}, fmt.Errorf("terminal.resize: %w", err)
	}
	info, err := m.Get(p.ProjectID, p.TerminalID)
	if err != nil {
		return protocol.Terminal{}, err
	}
	return terminalWire(info), nil
}

func (b *Backend) KillTerminal(ctx context.Context, p protocol.TerminalRef) (protocol.KilledResult, error) {
	m, err := b.terminals()
	if err != nil {
		return protocol.KilledResult{}, err
	}
	if err := m.Kill(p.ProjectID, p.TerminalID); err != nil {
		return protocol.KilledResult{}, fmt.Errorf("terminal.kill: %w", err)
	}
	return protocol.KilledResult{Killed: true}, nil
}

func (b *Backend) Terminals(ctx context.Context, p protocol.ProjectIDParams) (protocol.TerminalListResult, error) {
	m, err := b.terminals()
	if err != nil {
		return protocol.TerminalListResult{}, err
	}
	if _, err := b.projectOf(ctx, p.ProjectID); err != nil {
		return protocol.TerminalListResult{}, err
	}
	list := m.List(p.ProjectID)
	out := make([]protocol.Terminal, len(list))
	for i, info := range list {
		out[i] = terminalWire(info)
	}
	return protocol.TerminalListResult{Terminals: out}, nil
}

// terminalWire is a terminal on the wire.
func terminalWire(i terminal.Info) protocol.Terminal {
	return protocol.Terminal{
		ID: i.ID, ProjectID: i.ProjectID, Name: i.Name, Cwd: i.Cwd, Command: i.Command,
		Cols: int(i.Cols), Rows: int(i.Rows), Alive: i.Alive, ExitCode: i.ExitCode, Pid: i.Pid,
		CreatedAt: i.CreatedAt, LastSeq: i.LastSeq,
	}
}
