package proc

import (
	"encoding/binary"
	"testing"
)

func procargs(argv []string, env []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(argv)))
	b = append(b, "/bin/sleep\x00\x00\x00\x00"...)
	for _, s := range append(argv, env...) {
		b = append(b, s...)
		b = append(b, 0)
	}
	return append(b, 0)
}

func TestProcargsEnvHas(t *testing.T) {
	cases := []struct {
		argv, env []string
		want      bool
	}{
		{[]string{"sleep", "999"}, []string{"PATH=/bin", jailEnv + "=abc"}, true},
		{[]string{"sleep", "999"}, []string{jailEnv + "=abc/3"}, true},
		{[]string{"sleep", "999"}, []string{jailEnv + "=abcd"}, false},
		{[]string{"sleep", "999"}, []string{jailEnv + "=ab"}, false},
		{[]string{"sleep", jailEnv + "=abc"}, []string{"PATH=/bin"}, false}, // an argument is not the environment
		{nil, nil, false},
	}
	for _, c := range cases {
		if got := procargsEnvHas(procargs(c.argv, c.env), "abc"); got != c.want {
			t.Errorf("argv %q env %q: %v, want %v", c.argv, c.env, got, c.want)
		}
	}
	for _, b := range [][]byte{nil, {1, 0}, {5, 0, 0, 0, 'x'}, {1, 0, 0, 0, 'x', 0, 'a'}} {
		if procargsEnvHas(b, "abc") {
			t.Errorf("%q matched", b)
		}
	}
}
