package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// bench runs the figures; each spawns fresh sidecars.
type bench struct {
	cfg   config
	work  string
	model *fakeModel
	n     int // spawned so far (names data dirs)
}

// fresh spawns a sidecar on a new data dir with a new project. A run
// named by profile is the profiling build's, writing its profiles as
// profile.cpu.pprof and profile.heap.pprof; "" is the release build's.
func (b *bench) fresh(ctx context.Context, profile string) (*sidecar, string, error) {
	b.n++
	dir := filepath.Join(b.work, strconv.Itoa(b.n))
	proj := filepath.Join(dir, "project")
	if err := newProject(proj); err != nil {
		return nil, "", err
	}
	bin, env := b.cfg.bin, b.cfg.env
	if profile != "" {
		bin = b.cfg.profileBin
		env = append([]string{
			"ZQAGENT_CPUPROFILE=" + filepath.Join(b.cfg.profileDir, profile+".cpu.pprof"),
			"ZQAGENT_HEAPPROFILE=" + filepath.Join(b.cfg.profileDir, profile+".heap.pprof"),
		}, env...)
	}
	p, err := spawn(ctx, bin, spawnOpts{dataDir: filepath.Join(dir, "data"), modelURL: b.model.URL(), env: env})
	return p, proj, err
}

// runs returns how many runs a figure makes and the name of the profile
// of run i ("": a measured run). With --profile-dir the first run is an
// extra one of the profiling build, left out of the figures: the release
// build has no profiler linked (see cmd/sidecar/profile.go), and
// profiling would weigh on what is measured.
func (b *bench) runs(n int, figure string) (int, func(i int) string) {
	if b.cfg.profileDir == "" {
		return n, func(int) string { return "" }
	}
	return n + 1, func(i int) string {
		if i == 0 {
			return figure
		}
		return ""
	}
}

// start: spawn → ready line on an existing data dir (the usual start), and
// on a new one (the first start, which creates the database).
func (b *bench) start(ctx context.Context, t *table) error {
	dir := filepath.Join(b.work, "start")
	var ds, fresh []time.Duration
	for i := range 2*b.cfg.runs + 1 {
		p, err := spawn(ctx, b.cfg.bin, spawnOpts{dataDir: dir, modelURL: b.model.URL(), noDial: true})
		if err != nil {
			return err
		}
		if i > 0 { // the first run creates the database
			ds = append(ds, p.ready)
		}
		p.stop()
		if i%2 == 0 {
			newDir := filepath.Join(b.work, "start-new-"+strconv.Itoa(i))
			p, err := spawn(ctx, b.cfg.bin, spawnOpts{dataDir: newDir, modelURL: b.model.URL(), noDial: true})
			if err != nil {
				return err
			}
			fresh = append(fresh, p.ready)
			p.stop()
			if err := os.RemoveAll(newDir); err != nil {
				return err
			}
		}
	}
	t.add("spawn → ready line (existing data dir)", ms(median(ds)), "≤ 12 ms")
	t.add("spawn → ready line (new data dir)", ms(median(fresh)), "")
	return nil
}

// idle: RSS 5 s after start with one initialized connection.
func (b *bench) idle(ctx context.Context, t *table) error {
	var rss, anon, file []float64
	for range min(b.cfg.runs, 3) {
		p, _, err := b.fresh(ctx, "")
		if err != nil {
			return err
		}
		time.Sleep(b.cfg.idleWait)
		rss = append(rss, p.rss())
		a, _ := p.status("RssAnon")
		f, _ := p.status("RssFile")
		anon, file = append(anon, a), append(file, f)
		p.stop()
	}
	t.add("idle RSS after "+b.cfg.idleWait.String(), fmt.Sprintf("%.1f MiB", median(rss)), "≤ 20 MiB")
	t.add("  of it anonymous / file-backed (the binary's pages)", fmt.Sprintf("%.1f / %.1f MiB", median(anon), median(file)), "")
	return nil
}

// turns: the first and second chat turn of a fresh process.
func (b *bench) turns(ctx context.Context, t *table) error {
	var cpu1, cpu2, wall1, wall2, req1, req2 []time.Duration
	runs, profile := b.runs(b.cfg.runs, "turns")
	for i := range runs {
		p, proj, err := b.fresh(ctx, profile(i))
		if err != nil {
			return err
		}
		s, err := openSession(ctx, p, b.model, proj)
		if err != nil {
			p.stop()
			return err
		}
		b.model.reset()
		first, err := s.turn(ctx, "short", false)
		if err != nil {
			p.stop()
			return err
		}
		second, err := s.turn(ctx, "short", false)
		p.stop()
		if err != nil {
			return err
		}
		if profile(i) != "" {
			continue
		}
		cpu1, cpu2 = append(cpu1, first.cpu), append(cpu2, second.cpu)
		wall1, wall2 = append(wall1, first.wall), append(wall2, second.wall)
		req1, req2 = append(req1, first.toRequest), append(req2, second.toRequest)
	}
	t.add("first chat turn: server CPU / wall", ms(median(cpu1))+" / "+ms(median(wall1)), "within 10 ms of the second")
	t.add("second chat turn: server CPU / wall", ms(median(cpu2))+" / "+ms(median(wall2)), "")
	t.add("turn.start → model request, first / second turn", ms(median(req1))+" / "+ms(median(req2)), "")
	return nil
}

// tools: one turn of N read_file rounds.
func (b *bench) tools(ctx context.Context, t *table) error {
	var cpu, wall []time.Duration
	var peak []float64
	runs, profile := b.runs(b.cfg.runs, "tools")
	for i := range runs {
		p, proj, err := b.fresh(ctx, profile(i))
		if err != nil {
			return err
		}
		s, err := openSession(ctx, p, b.model, proj)
		if err != nil {
			p.stop()
			return err
		}
		// A warm-up turn, so that the figure is the rounds, not the first turn.
		if _, err := s.turn(ctx, "short", false); err != nil {
			p.stop()
			return err
		}
		st, err := s.turn(ctx, "tools "+strconv.Itoa(b.cfg.rounds), false)
		hwm, _ := p.status("VmHWM")
		p.stop()
		if err != nil {
			return err
		}
		if st.iterations != b.cfg.rounds+1 {
			return fmt.Errorf("tool turn: %d model rounds, want %d", st.iterations, b.cfg.rounds+1)
		}
		if profile(i) != "" {
			continue
		}
		cpu, wall, peak = append(cpu, st.cpu), append(wall, st.wall), append(peak, hwm)
	}
	n := strconv.Itoa(b.cfg.rounds)
	t.add(n+"-round tool turn: server CPU / wall", ms(median(cpu))+" / "+ms(median(wall)), "≤ 60 ms CPU")
	t.add(n+"-round tool turn: peak RSS", fmt.Sprintf("%.1f MiB", median(peak)), "")
	return nil
}

// stream: one turn of N one-character deltas to one client.
func (b *bench) stream(ctx context.Context, t *table) error {
	var rate, perDelta []float64
	want := streamText(b.cfg.deltas)
	runs, profile := b.runs(b.cfg.runs, "stream")
	for i := range runs {
		p, proj, err := b.fresh(ctx, profile(i))
		if err != nil {
			return err
		}
		s, err := openSession(ctx, p, b.model, proj)
		if err != nil {
			p.stop()
			return err
		}
		if _, err := s.turn(ctx, "short", false); err != nil {
			p.stop()
			return err
		}
		st, err := s.turn(ctx, "stream "+strconv.Itoa(b.cfg.deltas), true)
		p.stop()
		if err != nil {
			return err
		}
		if st.text != want {
			return fmt.Errorf("streamed %d characters in %d events, want %d", len(st.text), st.deltas, len(want))
		}
		if profile(i) != "" {
			continue
		}
		// The model's deltas per second of the client's stream (frames may
		// carry several deltas).
		el := max(st.streaming, time.Millisecond)
		rate = append(rate, float64(b.cfg.deltas)/el.Seconds())
		perDelta = append(perDelta, float64(st.cpu.Nanoseconds())/1000/float64(b.cfg.deltas))
	}
	n := strconv.Itoa(b.cfg.deltas)
	t.add(n+"-delta turn: deltas/s to one client", fmt.Sprintf("%.0f", median(rate)), "≥ 100,000")
	t.add(n+"-delta turn: server CPU per delta", fmt.Sprintf("%.1f µs", median(perDelta)), "≤ 8 µs")
	return nil
}

// long: N short turns in one session; RSS and per-turn time every 100.
func (b *bench) long(ctx context.Context, t *table) error {
	runs, profile := b.runs(1, "long")
	for i := range runs {
		rec := t
		if profile(i) != "" {
			rec = &table{} // the profiled run's figures are dropped
		}
		if err := b.longRun(ctx, profile(i), rec); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) longRun(ctx context.Context, profile string, t *table) error {
	p, proj, err := b.fresh(ctx, profile)
	if err != nil {
		return err
	}
	defer p.stop()
	s, err := openSession(ctx, p, b.model, proj)
	if err != nil {
		return err
	}
	time.Sleep(b.cfg.idleWait)
	idle := p.rss()
	t.series = append(t.series, fmt.Sprintf("long session (%d short turns): idle %.1f MiB", b.cfg.turns, idle))
	t.series = append(t.series, "| turns | RSS | per-turn wall (median) | per-turn server CPU (median) |", "|---|---|---|---|")
	var last float64
	var walls, cpus []time.Duration
	var firstCPU, lastCPU time.Duration
	for i := 1; i <= b.cfg.turns; i++ {
		st, err := s.turn(ctx, "short", false)
		if err != nil {
			return fmt.Errorf("turn %d: %w", i, err)
		}
		walls, cpus = append(walls, st.wall), append(cpus, st.cpu)
		if i%100 == 0 || i == b.cfg.turns {
			last = p.rss()
			t.series = append(t.series, fmt.Sprintf("| %d | %.1f MiB | %s | %s |", i, last, ms(median(walls)), ms(median(cpus))))
			if firstCPU == 0 {
				firstCPU = median(cpus)
			}
			lastCPU = median(cpus)
			walls, cpus = walls[:0], cpus[:0]
		}
	}
	t.add(fmt.Sprintf("RSS after %d short turns (idle %.1f)", b.cfg.turns, idle), fmt.Sprintf("%.1f MiB (+%.1f)", last, last-idle), "≤ idle + 15 MB")
	t.add("per-turn server CPU, first 100 → last 100 turns", ms(firstCPU)+" → "+ms(lastCPU), "flat")
	return nil
}
