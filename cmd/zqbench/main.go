// Command zqbench is `make bench`'s driver: it spawns the real sidecar
// binary, talks to it over its WebSocket like a desktop shell, points it at
// a local fake OpenAI-compatible model (fakemodel.go) and prints one table
// of the figures of issue 17: spawn → ready line, idle RSS, first vs second
// chat turn, streaming deltas/s and CPU per delta, RSS and per-turn time
// over a long session, and the server CPU of a 20-round tool turn. Server
// CPU is read from /proc (Linux only).
//
// With --profile-dir, the turns, tools, streaming and long-session figures
// each make one more run, first, of --profile-sidecar (the sidecar built
// with -tags zqprofile), which writes its CPU and heap profiles there
// (ZQAGENT_CPUPROFILE, ZQAGENT_HEAPPROFILE); that run is left out of the
// figures, which come from the release build.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type config struct {
	bin        string
	profileBin string
	runs       int
	deltas     int
	turns      int
	rounds     int
	idleWait   time.Duration
	profileDir string
	only       string
	env        envList
}

// envList is a repeatable --env flag.
type envList []string

func (l *envList) String() string     { return strings.Join(*l, " ") }
func (l *envList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var c config
	flag.StringVar(&c.bin, "sidecar", "bin/sidecar", "the sidecar binary")
	flag.StringVar(&c.profileBin, "profile-sidecar", "", "the sidecar built with -tags zqprofile, for the profiled runs of --profile-dir (default: --sidecar)")
	flag.IntVar(&c.runs, "runs", 5, "runs of each figure (the table shows medians)")
	flag.IntVar(&c.deltas, "deltas", 20000, "deltas of the streaming turn")
	flag.IntVar(&c.turns, "turns", 1000, "turns of the long session")
	flag.IntVar(&c.rounds, "rounds", 20, "tool rounds of the tool turn")
	flag.DurationVar(&c.idleWait, "idle-wait", 5*time.Second, "wait before reading the idle RSS")
	flag.StringVar(&c.profileDir, "profile-dir", "", "write CPU and heap profiles of the first run of the turns, tools, streaming and long-session figures here")
	flag.StringVar(&c.only, "only", "", "run one figure only: start, idle, turns, tools, stream or long")
	flag.Var(&c.env, "env", "K=V added to every sidecar's environment (repeatable), e.g. GODEBUG=gctrace=1")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "zqbench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if runtime.GOOS != "linux" {
		return errors.New("zqbench reads /proc: Linux only")
	}
	if _, err := os.Stat(c.bin); err != nil {
		return fmt.Errorf("sidecar binary: %w (make build)", err)
	}
	work, err := os.MkdirTemp("", "zqbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if c.profileDir != "" {
		if c.profileBin == "" {
			c.profileBin = c.bin
		}
		if _, err := os.Stat(c.profileBin); err != nil {
			return fmt.Errorf("profiling sidecar binary: %w", err)
		}
		if c.profileDir, err = filepath.Abs(c.profileDir); err != nil {
			return err
		}
		if err := os.MkdirAll(c.profileDir, 0o755); err != nil {
			return err
		}
	}
	m := newFakeModel()
	defer m.Close()
	b := &bench{cfg: c, work: work, model: m}
	t := &table{}
	figures := []struct {
		name string
		fn   func(context.Context, *table) error
	}{
		{"start", b.start},
		{"idle", b.idle},
		{"turns", b.turns},
		{"tools", b.tools},
		{"stream", b.stream},
		{"long", b.long},
	}
	for _, f := range figures {
		if c.only != "" && c.only != f.name {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		err := f.fn(ctx, t)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	fmt.Printf("\nzqbench: %s, %d CPUs, %d runs per figure (medians)\n\n", c.bin, runtime.NumCPU(), c.runs)
	t.print(os.Stdout)
	return nil
}
