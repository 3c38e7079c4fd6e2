//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

type keyStatus struct {
	Provider   string `json:"provider"`
	Configured bool   `json:"configured"`
	Source     string `json:"source"`
	Error      string `json:"error"`
}

func keyStatusOf(t *testing.T, c *client.Client, provider string) keyStatus {
	t.Helper()
	var st struct {
		Keys []keyStatus `json:"keys"`
	}
	require.NoError(t, c.Call(tctx(t), "keys.status", nil, &st))
	for _, k := range st.Keys {
		if k.Provider == provider {
			return k
		}
	}
	t.Fatalf("keys.status has no %s: %+v", provider, st.Keys)
	return keyStatus{}
}

// TestE2ESecretsNotInProcEnviron: the token and a key passed in the
// environment (the old way) are not in the sidecar's /proc/<pid>/environ
// (of any of its threads) when an allowlisted command of the model reads
// it, while a plain variable is; the key still serves (keys.status: env).
func TestE2ESecretsNotInProcEnviron(t *testing.T) {
	key := "sk-procenv-" + randHex(t, 12)
	token := "tok" + randHex(t, 16)
	control := "ctl" + randHex(t, 8)
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "script.json") // written once the pid is known
	projDir := filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, filepath.Join(dir, "data"), "ZQAGENT_SCRIPT="+scriptPath, "OPENAI_API_KEY="+key,
		"ZQAGENT_TOKEN="+token, "ZQAGENT_E2E_CONTROL="+control)
	require.Equal(t, token, p.ready.Token)
	require.Equal(t, p.cmd.Process.Pid, p.ready.PID, "the re-exec keeps the pid")

	pid := p.ready.PID
	grep := fmt.Sprintf("grep -r -a -o --include=environ -e %s -e %s -e %s /proc/%d/", key, token, control, pid)
	cat := fmt.Sprintf("cat /proc/%d/environ /proc/%d/cmdline", pid, pid)
	b, err := json.Marshal(map[string]any{"responses": []any{
		calls("", toolCall("c1", "run_shell", map[string]any{"command": grep})),
		calls("", toolCall("c2", "run_shell", map[string]any{"command": cat})),
		text("read /proc"),
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(scriptPath, b, 0o600))

	c := p.connect(t)
	st := keyStatusOf(t, c, "openai")
	require.True(t, st.Configured, "the environment's key still serves")
	require.Equal(t, "env", st.Source)
	projID, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	// Outside the sandbox: inside it (its own pid namespace) the sidecar's
	// /proc is not there to read at all.
	sid, err := c.CreateSession(tctx(t), projID, map[string]any{"allowedCommands": []string{"grep", "cat"}, "sandbox": "off"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "read the sidecar's environment")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "grep and cat are allowlisted")
	require.Len(t, ofType(evs, "tool_finished"), 2)

	out := toolResults(t, c, sid)
	require.Len(t, out, 2)
	require.Contains(t, out[0], fmt.Sprintf("/proc/%d/environ:%s", pid, control), "grep read the environ files")
	require.Contains(t, out[0], fmt.Sprintf("/proc/%d/task/%d/environ:%s", pid, pid, control))
	require.Contains(t, out[1], control, "cat read the environ file")
	for _, o := range out {
		require.NotContains(t, o, key)
		require.NotContains(t, o, token)
	}
	// And read directly by this (root or same-user) test process.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	require.Contains(t, string(env), control)
	require.NotContains(t, string(env), key)
	require.NotContains(t, string(env), token)
}

// execSidecar returns a command that runs the sidecar on a data dir of its own.
func execSidecar(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(sidecarBin, append([]string{"--data-dir", filepath.Join(t.TempDir(), "data")}, args...)...)
}

// TestE2ESecretsOnStdinOnly: a sidecar given its token and key on stdin
// only (--secrets-stdin) serves a turn with that key against an
// OpenAI-compatible server, and neither is in its environment.
func TestE2ESecretsOnStdinOnly(t *testing.T) {
	f := newLeakFake(t, true)
	key := "sk-stdin-" + randHex(t, 12)
	token := "tok-" + randHex(t, 16)
	dir := t.TempDir()
	projDir := filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	line, err := json.Marshal(map[string]any{"token": token, "keys": map[string]string{"openai": key}})
	require.NoError(t, err)
	p := spawnWith(t, filepath.Join(dir, "data"), spawnOptions{
		env: append(os.Environ(), "OPENAI_API_KEY=", "ZQAGENT_TOKEN=", "ZQAGENT_SCRIPT=",
			"OPENAI_BASE_URL="+f.srv.URL+"/v1", "OPENAI_FORCE_API_MODE=chat", "OPENAI_MODEL=stdin-model"),
		args:      []string{"--secrets-stdin"},
		stdinLine: string(line),
	})
	require.Equal(t, token, p.ready.Token, "the token from stdin")
	c := p.connect(t)
	st := keyStatusOf(t, c, "openai")
	require.True(t, st.Configured)
	require.Equal(t, "stdin", st.Source)

	projID, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), projID, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.Equal(t, "environment checked", deltaText(t, evs))
	require.True(t, f.sawKey(key), "the model request carried the key from stdin")

	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.ready.PID))
	require.NoError(t, err)
	require.NotContains(t, string(env), key)
	require.NotContains(t, string(env), token)
	require.NotContains(t, p.stderr.String(), key)
	require.NotContains(t, p.stderr.String(), token)

	// Stdin still means "exit at EOF" after the secrets line.
	require.NoError(t, p.stdin.Close())
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)
	require.Contains(t, p.stderr.String(), "stdin closed")
}

// TestE2ESecretsStdinRefused: a malformed secrets line stops the start
// with a message that names the problem and never the key.
func TestE2ESecretsStdinRefused(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"Token":"` + strings.Repeat("a", 32) + `"}`, `unknown field "Token"`},
		{`{"keys":{"openai":"sk-refused-1","openai":"sk-refused-2"}}`, `keys: duplicate field "openai"`},
		{`{"keys":{"openai":"sk-refused bad"`, "not valid JSON"},
	} {
		cmd := execSidecar(t, "--secrets-stdin")
		cmd.Stdin = strings.NewReader(c.line + "\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.Error(t, cmd.Run())
		require.Contains(t, stderr.String(), "sidecar: --secrets-stdin: ")
		require.Contains(t, stderr.String(), c.want)
		require.NotContains(t, stderr.String(), "sk-refused")
		require.Empty(t, stdout.String(), "no ready line")
	}
}

// processesWithEnv lists the live processes whose environment holds kv,
// other than the test process.
func processesWithEnv(t *testing.T, kv string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' || e.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(b, []byte(kv+"\x00")) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+": "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// TestE2ENoStrayDaemonsWithoutSessionBus: on a headless machine (no
// DBUS_SESSION_BUS_ADDRESS, no $XDG_RUNTIME_DIR/bus) the keychain is not
// available — keys.status says why, keys.set is -32005 with the cause and
// the remedy, an environment key still serves — and the sidecar starts no
// dbus-daemon or gnome-keyring-daemon: once it exited, no process that
// carries this test's marker variable is left.
func TestE2ENoStrayDaemonsWithoutSessionBus(t *testing.T) {
	if _, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid())); err == nil {
		t.Skip("this machine has a session bus in /run/user")
	}
	marker := "ZQAGENT_E2E_DAEMON_MARK=" + randHex(t, 8)
	home, runtime := t.TempDir(), t.TempDir()
	key := "sk-headless-" + randHex(t, 8)
	p := spawnWith(t, filepath.Join(t.TempDir(), "data"), spawnOptions{env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_RUNTIME_DIR=" + runtime, "OPENAI_API_KEY=" + key, marker,
	}})
	c := p.connect(t)
	st := keyStatusOf(t, c, "openai")
	require.True(t, st.Configured, "the environment key still serves")
	require.Equal(t, "env", st.Source)
	require.Contains(t, st.Error, "OS keychain not available: no D-Bus session bus")
	st = keyStatusOf(t, c, "deepseek")
	require.False(t, st.Configured)
	require.Contains(t, st.Error, "no D-Bus session bus")

	err := c.Call(tctx(t), "keys.set", map[string]any{"provider": "openai", "apiKey": "sk-never-stored-0123"}, nil)
	require.Equal(t, client.CodeConfig, client.Code(err))
	require.Contains(t, err.Error(), "no D-Bus session bus")
	require.Contains(t, err.Error(), "set OPENAI_API_KEY", "the remedy")
	require.NotContains(t, err.Error(), "sk-never-stored")
	err = c.Call(tctx(t), "keys.delete", map[string]any{"provider": "openai"}, nil)
	require.Equal(t, client.CodeConfig, client.Code(err))

	pids := processesWithEnv(t, marker)
	require.Len(t, pids, 1, "only the sidecar carries the marker: %v", pids)
	require.True(t, strings.HasPrefix(pids[0], fmt.Sprint(p.ready.PID)+":"), pids)

	require.NoError(t, p.stdin.Close())
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)
	require.Empty(t, processesWithEnv(t, marker), "a process the sidecar started outlived it")
}

// TestE2ENotDumpable: the sidecar makes itself not dumpable, so a command
// it runs as its own (non-root) user cannot read its /proc/<pid>/environ or
// mem. The kernel then makes those files root's instead of the process
// user's. Run as root, the test starts the sidecar as nobody (setpriv).
func TestE2ENotDumpable(t *testing.T) {
	var wrap []string
	uid := os.Getuid()
	bin := sidecarBin
	dataDir := filepath.Join(t.TempDir(), "data")
	if uid == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: cannot run the sidecar as another user")
		}
		uid = 65534
		wrap = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
		dir, err := os.MkdirTemp("", "sidecar-nobody-") // t.TempDir's parent is 0700
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		require.NoError(t, os.Chmod(dir, 0o777))
		bin = filepath.Join(dir, "sidecar")
		b, err := os.ReadFile(sidecarBin)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bin, b, 0o755))
		dataDir = filepath.Join(dir, "data")
		for d := dir; d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is not searchable by nobody", d)
			}
		}
	}
	key := "sk-dumpable-" + randHex(t, 8)
	p := spawnWith(t, dataDir, spawnOptions{bin: bin, wrap: wrap, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(dataDir), "OPENAI_API_KEY=" + key,
	}})
	pid := p.ready.PID
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	require.Contains(t, string(status), fmt.Sprintf("\nUid:\t%d\t", uid), "the sidecar runs as uid %d", uid)
	for _, f := range []string{"environ", "mem"} {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d/%s", pid, f))
		require.NoError(t, err)
		require.Zero(t, fi.Sys().(*syscall.Stat_t).Uid, "/proc/<pid>/%s is root's, not uid %d's: the sidecar is not dumpable", f, uid)
	}
	if wrap != nil { // a process of the sidecar's own user cannot read it
		out, err := exec.Command(wrap[0], append(wrap[1:], "cat", fmt.Sprintf("/proc/%d/environ", pid))...).CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "Permission denied")
		require.NotContains(t, string(out), key)
	}
}
