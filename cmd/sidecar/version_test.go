package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionFrom(t *testing.T) {
	bi := func(v string, kv ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: v}}
		for i := 0; i+1 < len(kv); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return b
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"module version", bi("v1.2.3"), "1.2.3"},
		{"vcs revision", bi("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "0123456789ab"},
		{"dirty tree", bi("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), "0123456789ab-dirty"},
		{"no vcs data", bi("(devel)"), "dev"},
		{"empty", bi(""), "dev"},
	} {
		require.Equal(t, tc.want, versionFrom(tc.bi), tc.name)
	}
}

// TestStampedVersion builds with the -X stamp make build uses and checks
// --version, the ready line and initialize agree.
func TestStampedVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sidecar")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=9.8.7-test", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	require.Equal(t, "9.8.7-test\n", string(out))

	cmd := exec.Command(bin, "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "ZQAGENT_TOKEN=")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	require.NoError(t, err)
	var ready readyLine
	require.NoError(t, json.Unmarshal(line, &ready))
	require.Equal(t, "9.8.7-test", ready.Version)
}

// TestHelp: --help exits 0 and lists every flag and every environment
// variable the sidecar's sources read.
func TestHelp(t *testing.T) {
	out, err := exec.Command(sidecarBin, "--help").Output()
	require.NoError(t, err, "--help exits 0")
	help := string(out)
	for _, f := range []string{"data-dir", "port", "allow-origin", "log-level", "keyring-service", "audit-log-dir", "version", "secrets-stdin"} {
		require.Contains(t, help, "-"+f, "flag %s", f)
	}
	// Every os.Getenv/LookupEnv("NAME") and env("NAME") in non-test sources.
	re := regexp.MustCompile(`(?:Getenv|LookupEnv|env|envInt|envF)\((?:env, )?"([A-Z][A-Z0-9_]+)"`)
	root := filepath.Join("..", "..")
	names := map[string]bool{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	}))
	skip := map[string]bool{"COMSPEC": true, "HOME": true, "PATH": true, "TERM": true, "XDG_RUNTIME_DIR": true}
	require.NotEmpty(t, names)
	for n := range names {
		if skip[n] || strings.HasPrefix(n, "ZQAGENT_KEYCHAIN_") {
			continue
		}
		require.Contains(t, help, n, "--help does not list the environment variable %s", n)
	}
}
