package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/llm"
)

func TestDecodeArgs(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	cases := []struct {
		in      string
		want    args
		wantErr string
	}{
		{`{"path":"a.go","limit":3}`, args{"a.go", 3}, ""},
		{``, args{}, ""},
		{`null`, args{}, ""},
		{`  {"path":"x"}  `, args{Path: "x"}, ""},
		{`"{\"path\":\"wrapped\"}"`, args{Path: "wrapped"}, ""},
		{`{"path":"x","unknown":true}`, args{Path: "x"}, ""},
		{`[1,2]`, args{}, "must be a JSON object"},
		{`{"limit":"three"}`, args{}, `field "limit"`},
		{`{"path":`, args{}, "invalid arguments"},
		{`"not json inside"`, args{}, "must be a JSON object"},
	}
	for _, tc := range cases {
		var got args
		err := DecodeArgs(json.RawMessage(tc.in), &got)
		if tc.wantErr != "" {
			if err == nil || !errors.Is(err, ErrInvalidArgs) || !contains(err.Error(), tc.wantErr) {
				t.Errorf("DecodeArgs(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("DecodeArgs(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func names(schemas []llm.ToolSchema) string {
	var out []string
	for _, s := range schemas {
		out = append(out, s.Function.Name)
	}
	return strings.Join(out, ",")
}

// FuzzDecodeArgs feeds arbitrary model output to the argument parser: it
// must never panic, and whatever it accepts is a JSON object.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, ``, `null`, `"{\"a\":1}"`, `[1]`, `{"a":`, `"\"x\""`, `{"a":{"b":[1,2,{"c":null}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var m map[string]any
		if err := DecodeArgs(json.RawMessage(in), &m); err != nil {
			if !errors.Is(err, ErrInvalidArgs) {
				t.Fatalf("error %v does not wrap ErrInvalidArgs", err)
			}
			return
		}
		if m == nil {
			m = map[string]any{}
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("accepted arguments do not re-marshal: %v", err)
		}
		_ = ArgsMap(json.RawMessage(in))
	})
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	h := func(ctx context.Context, c Call) (any, error) { return nil, nil }
	if err := r.Register(Spec{Handler: h}); !errors.Is(err, ErrNoName) {
		t.Fatalf("no name: %v", err)
	}
	if err := r.Register(Spec{Name: "a"}); !errors.Is(err, ErrNoHandler) {
		t.Fatalf("no handler: %v", err)
	}
	r.MustRegister(Spec{Name: "a", Handler: h, Meta: Metadata{Category: "x"}})
	r.MustRegister(Spec{Name: "b", Handler: h})
	r.MustRegister(Spec{Name: "a", Handler: h, Meta: Metadata{Category: "replaced"}})
	if s, _ := r.Lookup("a"); s.Meta.Category != "replaced" || s.Source != "internal" {
		t.Fatalf("replace by name: %+v", s)
	}
	if got := names(r.Schemas()); got != "a,b" {
		t.Fatalf("schemas = %s", got)
	}
	r.Disable("a")
	if got := names(r.Schemas()); got != "b" {
		t.Fatalf("disabled tool still listed: %s", got)
	}
	if _, ok := r.Lookup("a"); !ok {
		t.Fatal("disabled tool must stay registered")
	}
	r.Enable("a")
	if !r.Remove("b") || r.Remove("b") {
		t.Fatal("remove")
	}
	if got := names(r.Schemas()); got != "a" || r.Len() != 1 {
		t.Fatalf("after remove: %s", got)
	}
}
