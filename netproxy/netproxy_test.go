package netproxy

import (
	"errors"
	"testing"
)

func TestClient(t *testing.T) {
	if c, err := Client(""); c != nil || err != nil {
		t.Errorf("no proxy: %v %v", c, err)
	}
	for _, bad := range []string{"http://proxy:8080", "socks5://", "::"} {
		if _, err := Client(bad); !errors.Is(err, ErrBadProxy) {
			t.Errorf("%q: err = %v, want ErrBadProxy", bad, err)
		}
	}
	c, err := Client("socks5h://user:pass@127.0.0.1:1080")
	if err != nil || c == nil {
		t.Fatalf("socks5h: %v", err)
	}
	t.Setenv(EnvVar, " http://not-socks:1 ")
	if _, err := EnvClient(); !errors.Is(err, ErrBadProxy) {
		t.Errorf("a bad SOCKS5_PROXY is an error, never a direct connection: %v", err)
	}
}
