package schemagen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"

	"github.com/invopop/jsonschema"

	"github.com/zqagent/sidecar/protocol"
)

// What may change within a protocol version (ui-protocol.md §3, "What may
// change within version 1") is written into the schema here, so that a
// client checking frames against it accepts a newer sidecar's:
//
//   - The objects the sidecar sends (results, notifications, event data,
//     the error object, the ready line) allow members the schema does not
//     list: no additionalProperties. What a client sends stays closed
//     (additionalProperties: false): params, request.respond's responses,
//     the secrets line. A type both send (ClientInfo, VersionRange,
//     RetrySettings) is open in $defs and closed where params use it, by
//     unevaluatedProperties: false beside the $ref.
//   - The open enums (openEnums) accept other strings where the sidecar
//     sends them: {anyOf: [{$ref: Enum}, {type: string}]}.
//   - SessionEvent's oneOf has a last variant for a type that is not an
//     EventType ({properties: {type: {not: {$ref: EventType}}, data:
//     {type: object}}}: any data object), PendingRequest's one for a kind
//     that is not a RequestKind.
//
// protocol/validate's Exact mode reads these three shapes back as closed,
// to hold this build's own frames to exactly what the schema lists.

// openEnums are the enums whose values may grow within a protocol version:
// event types, request kinds, features and error kinds. Each is sent only
// (never in params).
var openEnums = []reflect.Type{
	reflect.TypeFor[protocol.EventType](),
	reflect.TypeFor[protocol.RequestKind](),
	reflect.TypeFor[protocol.Feature](),
	reflect.TypeFor[protocol.ErrorKind](),
}

// UnknownName is the event type and request kind the TypeScript client
// gives an event or request of a type or kind it does not know; no real one
// may take it.
const UnknownName = "unknown"

// open applies the rules above to g.defs; discriminate must have run.
func (g *gen) open() error {
	for _, e := range protocol.Events() {
		if e.Type == UnknownName {
			return fmt.Errorf("event type %q is reserved for clients (an event type they do not know)", e.Type)
		}
	}
	if slices.Contains(protocol.RequestKinds, UnknownName) {
		return fmt.Errorf("request kind %q is reserved for clients (a request kind they do not know)", UnknownName)
	}
	var out, in []string
	for _, m := range protocol.Methods() {
		in = append(in, reflect.TypeOf(m.Params).Name())
		out = append(out, reflect.TypeOf(m.Result).Name())
	}
	for _, n := range protocol.Notifications() {
		out = append(out, reflect.TypeOf(n.Params).Name())
	}
	for _, e := range protocol.Events() {
		out = append(out, reflect.TypeOf(e.Data).Name())
	}
	out = append(out, "Error", "ReadyLine")
	in = append(in, "ApprovalResponse", "QuestionResponse", "PlanResponse", "DirectoryResponse", "SecretsLine")
	sent, err := g.reach(out)
	if err != nil {
		return err
	}
	read, err := g.reach(in)
	if err != nil {
		return err
	}
	openEnum := map[string]bool{}
	for _, t := range openEnums {
		if read[t.Name()] {
			return fmt.Errorf("open enum %s is in params: an open enum is one the sidecar only sends", t.Name())
		}
		openEnum[t.Name()] = true
	}

	// Open what is sent; remember the types params use too. (Each node is
	// changed once, also where two defs share it.)
	shared := map[string]bool{}
	done := map[*jsonschema.Schema]bool{}
	for name := range sent {
		def := g.defs[name]
		for _, s := range nodes(def) {
			if done[s] {
				continue
			}
			done[s] = true
			if s.AdditionalProperties == jsonschema.FalseSchema {
				s.AdditionalProperties = nil
			}
			if openEnum[refName(s.Ref)] {
				known := &jsonschema.Schema{Ref: s.Ref}
				done[known] = true
				s.AnyOf = []*jsonschema.Schema{known, {Type: "string"}}
				s.Ref = ""
			}
		}
		if read[name] && def.Type == "object" && def.AdditionalProperties == nil {
			shared[name] = true
		}
	}
	// Close the shared types where params use them. unevaluatedProperties
	// sees only the $ref'd object's own members: a shared type must not
	// nest another object.
	for name := range shared {
		for _, s := range nodes(g.defs[name])[1:] {
			if s.Type == "object" || s.Ref != "" {
				return fmt.Errorf("%s is in params and results and nests an object: split it into a params and a result type", name)
			}
		}
	}
	for name := range read {
		if sent[name] {
			continue
		}
		for _, s := range nodes(g.defs[name]) {
			if shared[refName(s.Ref)] {
				if s.Extras == nil {
					s.Extras = map[string]any{}
				}
				s.Extras["unevaluatedProperties"] = false
			}
		}
	}

	// Events and pending requests of a type or kind this schema does not
	// know.
	other := func(key, enum string) *jsonschema.Schema {
		props := jsonschema.NewProperties()
		props.Set(key, &jsonschema.Schema{Not: &jsonschema.Schema{Ref: "#/$defs/" + enum}})
		props.Set("data", &jsonschema.Schema{Type: "object"})
		return &jsonschema.Schema{Properties: props, Required: []string{key, "data"}}
	}
	ev, req := g.defs["SessionEvent"], g.defs["PendingRequest"]
	ev.OneOf = append(ev.OneOf, other("type", "EventType"))
	req.OneOf = append(req.OneOf, other("kind", "RequestKind"))
	return nil
}

var refPattern = regexp.MustCompile(`"\$ref":"#/\$defs/([A-Za-z0-9_]+)"`)

// reach returns the defs reachable from roots by $ref.
func (g *gen) reach(roots []string) (map[string]bool, error) {
	seen := map[string]bool{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[name] {
			continue
		}
		def, ok := g.defs[name]
		if !ok {
			return nil, fmt.Errorf("$ref to %s, which is not in $defs", name)
		}
		seen[name] = true
		b, err := json.Marshal(def)
		if err != nil {
			return nil, err
		}
		for _, m := range refPattern.FindAllSubmatch(b, -1) {
			todo = append(todo, string(m[1]))
		}
	}
	return seen, nil
}

func refName(ref string) string {
	const prefix = "#/$defs/"
	if len(ref) > len(prefix) && ref[:len(prefix)] == prefix {
		return ref[len(prefix):]
	}
	return ""
}

// nodes returns s and every schema inside it, s first (not following
// $refs).
func nodes(s *jsonschema.Schema) []*jsonschema.Schema {
	if s == nil || s == jsonschema.TrueSchema || s == jsonschema.FalseSchema {
		return nil
	}
	out := []*jsonschema.Schema{s}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			out = append(out, nodes(p.Value)...)
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, c := range list {
			out = append(out, nodes(c)...)
		}
	}
	for _, c := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.Contains, s.AdditionalProperties, s.PropertyNames, s.ContentSchema} {
		out = append(out, nodes(c)...)
	}
	for _, m := range []map[string]*jsonschema.Schema{s.PatternProperties, s.DependentSchemas} {
		for _, c := range m {
			out = append(out, nodes(c)...)
		}
	}
	return out
}
