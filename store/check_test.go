package store

// Minimal stand-ins for testify's require and assert: testify's assert
// imports go.yaml.in/yaml/v3, which go.sum does not list, so the module's
// testify cannot be built here. require stops the test (call it on the test
// goroutine only); assert reports and goes on (safe on other goroutines).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

type checker struct{ fatal bool }

var (
	require = checker{fatal: true}
	assert  = checker{}
)

func (c checker) fail(t testing.TB, msgAndArgs []any, format string, args ...any) bool {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if len(msgAndArgs) > 0 {
		if f, ok := msgAndArgs[0].(string); ok {
			msg += ": " + fmt.Sprintf(f, msgAndArgs[1:]...)
		}
	}
	if c.fatal {
		t.Fatal(msg)
	}
	t.Error(msg)
	return false
}

func (c checker) NoError(t testing.TB, err error, m ...any) bool {
	t.Helper()
	if err != nil {
		return c.fail(t, m, "unexpected error: %v", err)
	}
	return true
}

func (c checker) ErrorIs(t testing.TB, err, target error, m ...any) bool {
	t.Helper()
	if !errors.Is(err, target) {
		return c.fail(t, m, "error %v is not %v", err, target)
	}
	return true
}

func (c checker) Equal(t testing.TB, want, got any, m ...any) bool {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		return c.fail(t, m, "not equal:\nwant %#v\n got %#v", want, got)
	}
	return true
}

func (c checker) NotEqual(t testing.TB, a, b any, m ...any) bool {
	t.Helper()
	if reflect.DeepEqual(a, b) {
		return c.fail(t, m, "both are %#v", a)
	}
	return true
}

func (c checker) True(t testing.TB, v bool, m ...any) bool {
	t.Helper()
	if !v {
		return c.fail(t, m, "want true")
	}
	return true
}

func (c checker) False(t testing.TB, v bool, m ...any) bool {
	t.Helper()
	if v {
		return c.fail(t, m, "want false")
	}
	return true
}

func length(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array, reflect.Chan:
		return rv.Len()
	}
	return -1
}

func (c checker) Len(t testing.TB, v any, n int, m ...any) bool {
	t.Helper()
	if l := length(v); l != n {
		return c.fail(t, m, "length %d, want %d", l, n)
	}
	return true
}

func isZero(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array, reflect.Chan:
		return rv.Len() == 0
	}
	return rv.IsZero()
}

func (c checker) Empty(t testing.TB, v any, m ...any) bool {
	t.Helper()
	if !isZero(v) {
		return c.fail(t, m, "want empty, got %#v", v)
	}
	return true
}

func (c checker) NotEmpty(t testing.TB, v any, m ...any) bool {
	t.Helper()
	if isZero(v) {
		return c.fail(t, m, "want non-empty")
	}
	return true
}

func (c checker) Zero(t testing.TB, v any, m ...any) bool {
	t.Helper()
	if !reflect.ValueOf(v).IsZero() {
		return c.fail(t, m, "want zero, got %#v", v)
	}
	return true
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

func (c checker) Nil(t testing.TB, v any, m ...any) bool {
	t.Helper()
	if !isNil(v) {
		return c.fail(t, m, "want nil, got %#v", v)
	}
	return true
}

func (c checker) NotNil(t testing.TB, v any, m ...any) bool {
	t.Helper()
	if isNil(v) {
		return c.fail(t, m, "want non-nil")
	}
	return true
}

func (c checker) JSONEq(t testing.TB, want, got string, m ...any) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(want), &a); err != nil {
		return c.fail(t, m, "want is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &b); err != nil {
		return c.fail(t, m, "got is not JSON (%q): %v", got, err)
	}
	if !reflect.DeepEqual(a, b) {
		return c.fail(t, m, "JSON differs:\nwant %s\n got %s", want, got)
	}
	return true
}

func (c checker) Contains(t testing.TB, s, sub string, m ...any) bool {
	t.Helper()
	if !strings.Contains(s, sub) {
		return c.fail(t, m, "%q does not contain %q", s, sub)
	}
	return true
}

func (c checker) NotContains(t testing.TB, s, sub string, m ...any) bool {
	t.Helper()
	if strings.Contains(s, sub) {
		return c.fail(t, m, "%q contains %q", s, sub)
	}
	return true
}

func (c checker) NotRegexp(t testing.TB, re, s string, m ...any) bool {
	t.Helper()
	if regexp.MustCompile(re).MatchString(s) {
		return c.fail(t, m, "%q matches %s", s, re)
	}
	return true
}

func (c checker) Greater(t testing.TB, a, b int, m ...any) bool {
	t.Helper()
	if a <= b {
		return c.fail(t, m, "%d is not greater than %d", a, b)
	}
	return true
}

func (c checker) BytesEqual(t testing.TB, want, got []byte, m ...any) bool {
	t.Helper()
	if !bytes.Equal(want, got) {
		return c.fail(t, m, "bytes differ:\nwant %q\n got %q", want, got)
	}
	return true
}
