// Package schemagen builds protocol/schema.json, the JSON Schema (2020-12)
// of the UI protocol, from the Go types of package protocol with
// github.com/invopop/jsonschema. The generator (../gen, run by go generate)
// writes it; protocol's tests compare the committed file with what Build
// returns.
//
// Layout of the document:
//
//	$defs          every type by its Go name (InitializeParams, Session,
//	               TurnEndData, VCSMode, Error, ...)
//	methods        {name: {params: {$ref}, result: {$ref}}} for every method
//	notifications  {method: {params: {$ref}}} for every server notification
//	events         {type: {$ref}} the data of every session event type
//	errorCodes     {name: code} of the JSON-RPC error codes
//	frames         {$ref}s of the envelopes: request, response, errorResponse,
//	               notification
//	stdio          {$ref}s of the ready line (stdout) and the secrets line
//	               (stdin, --secrets-stdin)
//
// SessionEvent's and PendingRequest's data are discriminated by type and
// kind with oneOf, so a validator checks each event's data.
//
// What the sidecar sends is open to additions (open.go): its objects allow
// members the schema does not list, and events and pending requests of
// types and kinds it does not know pass, so that a client built against
// this schema accepts a newer sidecar of the same protocol version. What a
// client sends stays closed.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/zqagent/sidecar/protocol"
)

// ID is the schema's $id.
const ID = "https://github.com/zqagent/sidecar/protocol/schema.json"

const pkgPath = "github.com/zqagent/sidecar/protocol"

// Document is schema.json.
type Document struct {
	Schema        string                        `json:"$schema"`
	ID            string                        `json:"$id"`
	Title         string                        `json:"title"`
	Description   string                        `json:"description"`
	Versions      protocol.VersionRange         `json:"protocolVersions"`
	Methods       map[string]MethodRefs         `json:"methods"`
	Notifications map[string]NotificationRefs   `json:"notifications"`
	Events        map[string]*jsonschema.Schema `json:"events"`
	ErrorCodes    map[string]int                `json:"errorCodes"`
	Frames        map[string]*jsonschema.Schema `json:"frames"`
	Stdio         map[string]*jsonschema.Schema `json:"stdio"`
	Defs          jsonschema.Definitions        `json:"$defs"`
}

// MethodRefs point at a method's params and result.
type MethodRefs struct {
	Params *jsonschema.Schema `json:"params"`
	Result *jsonschema.Schema `json:"result"`
}

// NotificationRefs point at a notification's params.
type NotificationRefs struct {
	Params *jsonschema.Schema `json:"params"`
}

// enums are the named string types and their values.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[protocol.ErrorKind]():     strs(protocol.ErrorKinds),
	reflect.TypeFor[protocol.Feature]():       strs(protocol.Features),
	reflect.TypeFor[protocol.VCSMode]():       strs(protocol.VCSModes),
	reflect.TypeFor[protocol.Mode]():          strs(protocol.Modes),
	reflect.TypeFor[protocol.ShellPolicy]():   strs(protocol.ShellPolicies),
	reflect.TypeFor[protocol.SandboxMode]():   strs(protocol.SandboxModes),
	reflect.TypeFor[protocol.SessionStatus](): strs(protocol.SessionStatuses),
	reflect.TypeFor[protocol.RequestKind]():   strs(protocol.RequestKinds),
	reflect.TypeFor[protocol.GrantKind]():     strs(protocol.GrantKinds),
	reflect.TypeFor[protocol.Outcome]():       strs(protocol.Outcomes),
	reflect.TypeFor[protocol.APIMode]():       strs(protocol.APIModes),
	reflect.TypeFor[protocol.SearchKind]():    strs(protocol.SearchKinds),
	reflect.TypeFor[protocol.ToolStatus]():    strs(protocol.ToolStatuses),
	reflect.TypeFor[protocol.TurnStatus]():    strs(protocol.TurnStatuses),
	reflect.TypeFor[protocol.OmittedReason](): strs(protocol.OmittedReasons),
	reflect.TypeFor[protocol.EventType]():     eventTypes(),

	// MCP elicitation (elicitation.go).
	reflect.TypeFor[protocol.ElicitationAction](): strs(protocol.ElicitationActions),
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func eventTypes() []string {
	var out []string
	for _, e := range protocol.Events() {
		out = append(out, string(e.Type))
	}
	return out
}

// Build returns schema.json. dir is the directory of package protocol's
// sources (their doc comments become descriptions).
func Build(dir string) ([]byte, error) {
	g := &gen{defs: jsonschema.Definitions{}, types: map[string]reflect.Type{}}
	g.r = &jsonschema.Reflector{
		Anonymous: true,
		Mapper:    g.mapper,
	}
	if err := g.r.AddGoComments(pkgPath, dir); err != nil {
		return nil, fmt.Errorf("read doc comments: %w", err)
	}
	doc := Document{
		Schema:        "https://json-schema.org/draft/2020-12/schema",
		ID:            ID,
		Title:         "zqagent sidecar UI protocol",
		Description:   "Generated from package github.com/zqagent/sidecar/protocol by go generate; do not edit. See ui-protocol.md.",
		Versions:      protocol.VersionRange{Min: protocol.MinVersion, Max: protocol.MaxVersion},
		Methods:       map[string]MethodRefs{},
		Notifications: map[string]NotificationRefs{},
		Events:        map[string]*jsonschema.Schema{},
		ErrorCodes: map[string]int{
			"parseError": protocol.CodeParseError, "invalidRequest": protocol.CodeInvalidRequest,
			"methodNotFound": protocol.CodeMethodNotFound, "invalidParams": protocol.CodeInvalidParams,
			"internal": protocol.CodeInternal, "notInitialized": protocol.CodeNotInitialized,
			"notFound": protocol.CodeNotFound, "conflict": protocol.CodeConflict,
			"forbidden": protocol.CodeForbidden, "config": protocol.CodeConfig,
		},
		Defs: g.defs,
	}
	for _, m := range protocol.Methods() {
		doc.Methods[m.Name] = MethodRefs{Params: g.ref(m.Params), Result: g.ref(m.Result)}
	}
	for _, n := range protocol.Notifications() {
		doc.Notifications[n.Method] = NotificationRefs{Params: g.ref(n.Params)}
	}
	for _, e := range protocol.Events() {
		doc.Events[string(e.Type)] = g.ref(e.Data)
	}
	doc.Stdio = map[string]*jsonschema.Schema{"ready": g.ref(protocol.ReadyLine{}), "secrets": g.ref(protocol.SecretsLine{})}
	for _, v := range []any{protocol.Error{}, protocol.ApprovalResponse{}, protocol.QuestionResponse{}, protocol.PlanResponse{}, protocol.DirectoryResponse{}, protocol.ElicitationResponse{}} {
		g.ref(v)
	}
	// The sidecar sends error.data with every error (a Go client may decode
	// an error without it, hence omitempty).
	g.defs["Error"].Required = append(g.defs["Error"].Required, "data")
	for t, vals := range enums {
		anys := make([]any, len(vals))
		for i, v := range vals {
			anys[i] = v
		}
		g.defs[t.Name()] = &jsonschema.Schema{Type: "string", Enum: anys, Description: g.r.CommentMap[pkgPath+"."+t.Name()]}
	}
	if err := g.nullablePointers(); err != nil {
		return nil, err
	}
	if err := g.enumFields(); err != nil {
		return nil, err
	}
	g.discriminate()
	if err := g.open(); err != nil {
		return nil, err
	}
	doc.Frames = frames(g.defs)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type gen struct {
	r     *jsonschema.Reflector
	defs  jsonschema.Definitions
	types map[string]reflect.Type // def name → Go type, of the structs
}

// ref reflects v's type into the shared $defs and returns a $ref to it.
func (g *gen) ref(v any) *jsonschema.Schema {
	t := reflect.TypeOf(v)
	s := g.r.ReflectFromType(t)
	for name, d := range s.Definitions {
		g.defs[name] = d
	}
	g.collect(t)
	return &jsonschema.Schema{Ref: "#/$defs/" + t.Name()}
}

// collect records the struct types reachable from t by their def names.
func (g *gen) collect(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != pkgPath {
		return
	}
	if _, seen := g.types[t.Name()]; seen {
		return
	}
	g.types[t.Name()] = t
	for i := range t.NumField() {
		g.collect(t.Field(i).Type)
	}
}

// mapper gives the schemas of the types whose JSON is not their Go shape.
func (g *gen) mapper(t reflect.Type) *jsonschema.Schema {
	if _, ok := enums[t]; ok {
		return &jsonschema.Schema{Ref: "#/$defs/" + t.Name()}
	}
	switch t {
	case reflect.TypeFor[protocol.VersionSpec]():
		g.defs["VersionSpec"] = &jsonschema.Schema{
			Description: g.r.CommentMap[pkgPath+".VersionSpec"],
			OneOf: []*jsonschema.Schema{
				{Type: "integer", Minimum: "1"},
				{Ref: "#/$defs/VersionRange"},
			},
		}
		vr := g.r.ReflectFromType(reflect.TypeFor[protocol.VersionRange]())
		for name, d := range vr.Definitions {
			g.defs[name] = d
		}
		return &jsonschema.Schema{Ref: "#/$defs/VersionSpec"}
	case reflect.TypeFor[protocol.MCPServerConfig]():
		props := jsonschema.NewProperties()
		str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
		strMap := func() *jsonschema.Schema {
			return &jsonschema.Schema{Type: "object", AdditionalProperties: str()}
		}
		props.Set("name", str())
		props.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"stdio", "http", "sse", "builtin"}})
		props.Set("command", &jsonschema.Schema{OneOf: []*jsonschema.Schema{str(), {Type: "array", Items: str()}}})
		props.Set("args", &jsonschema.Schema{Type: "array", Items: str()})
		props.Set("env", strMap())
		props.Set("cwd", str())
		props.Set("url", str())
		props.Set("headers", strMap())
		props.Set("enabled", &jsonschema.Schema{Type: "boolean"})
		props.Set("disabled", &jsonschema.Schema{Type: "boolean"})
		props.Set("timeout", &jsonschema.Schema{Type: "integer", Description: "milliseconds"})
		g.defs["MCPServerConfig"] = &jsonschema.Schema{
			Type:                 "object",
			Description:          g.r.CommentMap[pkgPath+".MCPServerConfig"],
			Properties:           props,
			AdditionalProperties: jsonschema.TrueSchema, // unknown fields are kept
		}
		return &jsonschema.Schema{Ref: "#/$defs/MCPServerConfig"}
	}
	return nil
}

// enumFields gives a string field tagged enum:"Name" the schema of the
// enum type Name (a plain string in Go, so that callers compare it with
// their own literals, one of Name's values on the wire).
func (g *gen) enumFields() error {
	for name, t := range g.types {
		def := g.defs[name]
		if def == nil || def.Properties == nil {
			continue
		}
		for i := range t.NumField() {
			f := t.Field(i)
			enum := f.Tag.Get("enum")
			if enum == "" {
				continue
			}
			if _, ok := g.defs[enum]; !ok {
				return fmt.Errorf("%s.%s: enum %q is not a defined enum", name, f.Name, enum)
			}
			jname, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p, ok := def.Properties.Get(jname)
			if !ok {
				return fmt.Errorf("%s.%s: property %q not in the schema", name, f.Name, jname)
			}
			def.Properties.Set(jname, &jsonschema.Schema{Ref: "#/$defs/" + enum, Description: p.Description})
		}
	}
	return nil
}

// nullablePointers lets a pointer field without omitempty be null (the
// sidecar sends null for it, e.g. a grant's grantedAt).
func (g *gen) nullablePointers() error {
	for name, t := range g.types {
		def := g.defs[name]
		if def == nil || def.Properties == nil {
			continue
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type.Kind() != reflect.Pointer || f.Anonymous {
				continue
			}
			tag := f.Tag.Get("json")
			jname, opts, _ := strings.Cut(tag, ",")
			if jname == "-" || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				continue
			}
			p, ok := def.Properties.Get(jname)
			if !ok {
				return fmt.Errorf("%s.%s: property %q not in the schema", name, f.Name, jname)
			}
			def.Properties.Set(jname, &jsonschema.Schema{
				Description: p.Description,
				AnyOf:       []*jsonschema.Schema{{Ref: p.Ref, Type: p.Type, Format: p.Format}, {Type: "null"}},
			})
		}
	}
	return nil
}

// discriminate ties SessionEvent.data to its type and PendingRequest.data
// to its kind.
func (g *gen) discriminate() {
	var evs []*jsonschema.Schema
	for _, e := range protocol.Events() {
		evs = append(evs, variant("type", string(e.Type), reflect.TypeOf(e.Data).Name()))
	}
	g.defs["SessionEvent"].OneOf = evs
	var reqs []*jsonschema.Schema
	kinds := protocol.RequestEvents()
	for _, k := range protocol.RequestKinds {
		data := ""
		for _, e := range protocol.Events() {
			if e.Type == kinds[k] {
				data = reflect.TypeOf(e.Data).Name()
			}
		}
		reqs = append(reqs, variant("kind", string(k), data))
	}
	g.defs["PendingRequest"].OneOf = reqs
}

func variant(key, value, dataDef string) *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set(key, &jsonschema.Schema{Const: value})
	props.Set("data", &jsonschema.Schema{Ref: "#/$defs/" + dataDef})
	return &jsonschema.Schema{Properties: props, Required: []string{key, "data"}}
}

// frames adds the JSON-RPC envelopes to defs and returns refs to them.
func frames(defs jsonschema.Definitions) map[string]*jsonschema.Schema {
	obj := func(desc string, required []string, kv ...any) *jsonschema.Schema {
		props := jsonschema.NewProperties()
		for i := 0; i < len(kv); i += 2 {
			props.Set(kv[i].(string), kv[i+1].(*jsonschema.Schema))
		}
		return &jsonschema.Schema{Type: "object", Description: desc, Properties: props, Required: required, AdditionalProperties: jsonschema.FalseSchema}
	}
	version := func() *jsonschema.Schema { return &jsonschema.Schema{Const: "2.0"} }
	id := func() *jsonschema.Schema {
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}, {Type: "null"}}}
	}
	method := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	defs["RequestFrame"] = obj("A client request (id set) or client notification.", []string{"jsonrpc", "method"},
		"jsonrpc", version(), "id", id(), "method", method(), "params", &jsonschema.Schema{Type: "object"})
	defs["ResponseFrame"] = obj("A successful response; result is the method's result.", []string{"jsonrpc", "id", "result"},
		"jsonrpc", version(), "id", id(), "result", jsonschema.TrueSchema)
	defs["ErrorResponseFrame"] = obj("An error response.", []string{"jsonrpc", "id", "error"},
		"jsonrpc", version(), "id", id(), "error", &jsonschema.Schema{Ref: "#/$defs/Error"})
	defs["NotificationFrame"] = obj("A server notification; params is the notification's params.", []string{"jsonrpc", "method", "params"},
		"jsonrpc", version(), "method", method(), "params", &jsonschema.Schema{Type: "object"})
	out := map[string]*jsonschema.Schema{}
	for _, k := range []string{"request", "response", "errorResponse", "notification"} {
		out[k] = &jsonschema.Schema{Ref: "#/$defs/" + strings.ToUpper(k[:1]) + k[1:] + "Frame"}
	}
	return out
}
