package sandbox

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestResolveOff(t *testing.T) {
	st, err := Resolve(Config{Mode: ModeOff})
	if err != nil {
		t.Fatal(err)
	}
	if st.Enforced || st.Kind != KindNone || st.Mode != ModeOff {
		t.Fatalf("off: %+v", st)
	}
	argv := []string{"sh", "-c", "true"}
	if got := Wrap(st, t.TempDir(), nil, argv); strings.Join(got, " ") != "sh -c true" {
		t.Fatalf("Wrap with no sandbox changed argv: %q", got)
	}
	if !strings.Contains(Describe(st), "disabled") {
		t.Fatalf("Describe(off) = %q", Describe(st))
	}
}

func TestResolveUnknownMode(t *testing.T) {
	if _, err := Resolve(Config{Mode: "sometimes"}); !errors.Is(err, ErrUnknownMode) {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseMode("Required"); err != nil {
		t.Fatal(err)
	}
	if m, _ := ParseMode(""); m != ModeAuto {
		t.Fatalf("default mode %q", m)
	}
}

func TestResolveRequiredMatchesAuto(t *testing.T) {
	auto, err := Resolve(Config{})
	if err != nil {
		t.Fatalf("auto never fails: %v", err)
	}
	if auto.Mode != ModeAuto {
		t.Fatalf("mode %q", auto.Mode)
	}
	req, err := Resolve(Config{Mode: ModeRequired})
	if auto.Enforced {
		if err != nil || !req.Enforced {
			t.Fatalf("required with a working sandbox: %+v %v", req, err)
		}
		return
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), auto.Reason) || auto.Reason == "" {
		t.Fatalf("required without sandbox: err=%v reason=%q", err, auto.Reason)
	}
}

func TestSandboxExecProfile(t *testing.T) {
	ws := t.TempDir()
	argv := Wrap(Status{Kind: KindSandboxExec, Enforced: true}, ws, []string{`/data/we"ird`}, []string{"make", "test"})
	if argv[0] != "sandbox-exec" || argv[1] != "-p" || argv[len(argv)-2] != "make" || argv[len(argv)-1] != "test" {
		t.Fatalf("argv %q", argv)
	}
	prof := argv[2]
	for _, want := range []string{"(deny file-write*)", `(subpath "` + writableDirs(ws, nil)[0] + `")`, `(subpath "/data/we\"ird")`, `(subpath "` + writableDirs(ws, nil)[0] + `/.git")`, "(deny network*)"} {
		if !strings.Contains(prof, want) {
			t.Errorf("profile lacks %s:\n%s", want, prof)
		}
	}
}

func TestBwrapArgv(t *testing.T) {
	ws := t.TempDir()
	argv := Wrap(Status{Kind: KindBwrap, Enforced: true}, ws, []string{"/nonexistent/cache"}, []string{"ls", "-l"})
	got := strings.Join(argv, " ")
	for _, want := range []string{"bwrap --ro-bind / / --dev /dev --proc /proc", "--bind-try " + writableDirs(ws, nil)[0], "--bind-try /nonexistent/cache /nonexistent/cache", "--ro-bind-try " + writableDirs(ws, nil)[0] + "/.git", "--ro-bind-try " + writableDirs(ws, nil)[0] + "/.agent", "--unshare-pid --unshare-net --new-session --die-with-parent -- ls -l"} {
		if !strings.Contains(got, want) {
			t.Errorf("argv lacks %q: %s", want, got)
		}
	}
}

func TestNetworkFlag(t *testing.T) {
	ws := t.TempDir()
	on := strings.Join(Wrap(Status{Kind: KindBwrap, Enforced: true, Network: true}, ws, nil, []string{"true"}), " ")
	if strings.Contains(on, "--unshare-net") {
		t.Errorf("network allowed but cut: %s", on)
	}
	prof := Wrap(Status{Kind: KindSandboxExec, Enforced: true, Network: true}, ws, nil, []string{"true"})[2]
	if strings.Contains(prof, "network") {
		t.Errorf("network allowed but denied:\n%s", prof)
	}
	if st, _ := Resolve(Config{Mode: ModeOff}); !st.Network {
		t.Errorf("no sandbox must report the network as reachable: %+v", st)
	}
}

func TestBoxRequired(t *testing.T) {
	b, err := NewBox(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if st := b.Status(); st.Mode != ModeAuto || st.Network != !st.Enforced {
		t.Fatalf("auto box: %+v", st)
	}
	if err := b.SetMode("sometimes"); !errors.Is(err, ErrUnknownMode) {
		t.Fatalf("SetMode(sometimes) = %v", err)
	}
	if err := b.SetMode(ModeRequired); err != nil {
		t.Fatal(err)
	}
	argv, err := b.Wrap(t.TempDir(), []string{"true"})
	if b.Status().Enforced {
		if err != nil || argv[0] == "true" {
			t.Fatalf("required with a sandbox: %q %v", argv, err)
		}
	} else if !errors.Is(err, ErrUnavailable) || argv != nil {
		t.Fatalf("required without a sandbox must refuse the command: %q %v", argv, err)
	}
	if err := b.SetMode(ModeOff); err != nil {
		t.Fatal(err)
	}
	if argv, err := b.Wrap(t.TempDir(), []string{"true"}); err != nil || len(argv) != 1 {
		t.Fatalf("off: %q %v", argv, err)
	}
	b.SetNetwork(true)
	if !b.Status().Network {
		t.Fatal("SetNetwork(true) not reported")
	}
}
