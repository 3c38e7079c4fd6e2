package oslocale

import "testing"

func TestFromEnv(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LANG": "ko_KR.UTF-8"}, "ko_KR.UTF-8"},
		{map[string]string{"LC_ALL": "ja_JP.UTF-8", "LC_MESSAGES": "es_ES", "LANG": "ko_KR"}, "ja_JP.UTF-8"},
		{map[string]string{"LC_MESSAGES": "es_ES", "LANG": "ko_KR"}, "es_ES"},
		{map[string]string{"LC_ALL": "C", "LANG": "zh_TW.UTF-8"}, "zh_TW.UTF-8"},
		{map[string]string{"LC_ALL": "C.UTF-8", "LC_MESSAGES": "POSIX"}, ""},
		{map[string]string{"LANG": "  "}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := FromEnv(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: got %q, want %q", c.env, got, c.want)
		}
	}
}
