package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/net/idna"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// Elicitation (MCP elicitation/create, form and URL modes). Every stdio and
// streamable HTTP connection advertises the capability for both modes; a
// server's request is checked here, then asked of the user through the
// tools.Elicitor of the tool call it belongs to:
//   - with protocol 2026-07-28 the request comes back inside the call
//     (multi round-trip), so its context is the call's;
//   - with earlier versions the server sends it on its own; it belongs to the
//     one tool call in flight on the connection. With none (a server asking
//     outside a call), or calls of several sessions at once, nobody can be
//     said to be asked: the server gets decline and the sidecar logs why.
//     Such requests are asked one at a time: one that comes while another
//     waits for the user is declined.
//
// A form's schema must be MCP's: a flat object of string (format, enum,
// length), number, integer (minimum, maximum), boolean or string-enum array
// properties; a URL must be https:, or http: to a loopback host, with no
// user info. Anything else is declined to the server, never shown. Whatever
// ends the wait without an answer (the turn ends, the call times out) is
// cancel to the server.

// Bounds of a server's request.
const (
	maxElicitMessage = 16 << 10
	maxElicitSchema  = 64 << 10
	maxElicitURL     = 8 << 10
	maxElicitProps   = 64
)

// ErrElicitation is the error of a server's elicitation the sidecar refuses
// to show (it is declined to the server).
var ErrElicitation = errors.New("elicitation refused")

// clientOptions are the mcp-go client options of a connection: the
// elicitation handler and the capability for both modes.
func (c *conn) clientOptions(d *dialer) []client.ClientOption {
	return []client.ClientOption{
		client.WithElicitationHandler(elicitHandler{c: c, d: d}),
		client.WithClientCapabilities(mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
		}),
	}
}

// callSet tracks the contexts of the tool calls in flight on a connection.
type callSet struct {
	mu    sync.Mutex
	calls map[*context.Context]struct{} // guarded by mu
}

// track adds ctx until the returned func is called.
func (s *callSet) track(ctx context.Context) func() {
	key := &ctx
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[*context.Context]struct{}{}
	}
	s.calls[key] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.calls, key)
		s.mu.Unlock()
	}
}

// only returns the context of the one call in flight, and how many are.
func (s *callSet) only() (context.Context, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 1 {
		return nil, len(s.calls)
	}
	for k := range s.calls {
		return *k, 1
	}
	return nil, 0 // not reached
}

// elicitHandler is a connection's client.ElicitationHandler.
type elicitHandler struct {
	c *conn
	d *dialer
}

var _ client.ElicitationHandler = elicitHandler{}

// Elicit implements client.ElicitationHandler. It never fails: what cannot
// be asked is decline, what was not answered is cancel.
func (h elicitHandler) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	log := h.d.logger.With("server", h.c.name)
	el, err := CheckElicitation(h.c.name, req.Params)
	if err != nil {
		log.Warn("mcp elicitation declined without showing it", "err", err)
		return elicitResult(protocol.ElicitationDecline, nil), nil
	}
	who := tools.ElicitorFrom(ctx)
	if who == nil {
		// A server-initiated request: the call in flight it belongs to.
		callCtx, n := h.c.calls.only()
		if n != 1 {
			log.Warn("mcp elicitation declined: it belongs to no tool call of one session", "calls", n, "message", el.Message)
			return elicitResult(protocol.ElicitationDecline, nil), nil
		}
		if who = tools.ElicitorFrom(callCtx); who == nil {
			log.Warn("mcp elicitation declined: the tool call has no session to ask", "message", el.Message)
			return elicitResult(protocol.ElicitationDecline, nil), nil
		}
		// One at a time: mcp-go hands each request to its own goroutine,
		// and a server asking many at once would open a card (and a
		// stored request) for each.
		if !h.c.asking.CompareAndSwap(false, true) {
			log.Warn("mcp elicitation declined: the server is already asking the user", "message", el.Message)
			return elicitResult(protocol.ElicitationDecline, nil), nil
		}
		defer h.c.asking.Store(false)
		// Wait as long as the call and the server's request both last (the
		// request's end, e.g. mcp-go's 30 s over streamable HTTP, is the
		// cause: a deadline reads as a timeout).
		wctx, cancel := context.WithCancelCause(callCtx)
		defer cancel(nil)
		reqCtx := ctx
		stop := context.AfterFunc(reqCtx, func() {
			cancel(fmt.Errorf("the server's request ended: %w", context.Cause(reqCtx)))
		})
		defer stop()
		ctx = wctx
	}
	ans, err := who.Elicit(ctx, el)
	if err != nil {
		log.Info("mcp elicitation not answered: cancel", "err", err)
		return elicitResult(protocol.ElicitationCancel, nil), nil
	}
	var content map[string]any
	if ans.Action == string(protocol.ElicitationAccept) && len(ans.Content) > 0 {
		if err := json.Unmarshal(ans.Content, &content); err != nil {
			log.Warn("mcp elicitation answer", "err", err)
			return elicitResult(protocol.ElicitationCancel, nil), nil
		}
	}
	switch protocol.ElicitationAction(ans.Action) {
	case protocol.ElicitationAccept, protocol.ElicitationDecline, protocol.ElicitationCancel:
	default:
		return elicitResult(protocol.ElicitationCancel, nil), nil
	}
	if el.Mode == protocol.ElicitationForm && ans.Action == string(protocol.ElicitationAccept) && content == nil {
		content = map[string]any{}
	}
	return elicitResult(protocol.ElicitationAction(ans.Action), content), nil
}

func elicitResult(a protocol.ElicitationAction, content map[string]any) *mcp.ElicitationResult {
	r := &mcp.ElicitationResult{}
	r.Action = mcp.ElicitationResponseAction(a)
	if content != nil {
		r.Content = content
	}
	return r
}

// CheckElicitation checks a server's elicitation and returns it as the user
// is asked it; an error (ErrElicitation) says why it must not be shown.
func CheckElicitation(server string, p mcp.ElicitationParams) (tools.Elicitation, error) {
	el := tools.Elicitation{Server: server, Message: p.Message, Mode: p.Mode}
	if el.Mode == "" {
		el.Mode = protocol.ElicitationForm
	}
	if len(p.Message) > maxElicitMessage {
		return el, fmt.Errorf("%w: the message is %d bytes (at most %d)", ErrElicitation, len(p.Message), maxElicitMessage)
	}
	switch el.Mode {
	case protocol.ElicitationForm:
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil || p.RequestedSchema == nil {
			return el, fmt.Errorf("%w: a form without a requestedSchema", ErrElicitation)
		}
		if len(raw) > maxElicitSchema {
			return el, fmt.Errorf("%w: the requestedSchema is %d bytes (at most %d)", ErrElicitation, len(raw), maxElicitSchema)
		}
		if err := CheckRequestedSchema(raw); err != nil {
			return el, err
		}
		el.RequestedSchema = raw
	case protocol.ElicitationURL:
		host, err := CheckElicitURL(p.URL)
		if err != nil {
			return el, err
		}
		if p.ElicitationID == "" {
			return el, fmt.Errorf("%w: a url elicitation without an elicitationId", ErrElicitation)
		}
		el.URL, el.Host, el.ElicitationID = p.URL, host, p.ElicitationID
	default:
		return el, fmt.Errorf("%w: unknown mode %q", ErrElicitation, p.Mode)
	}
	return el, nil
}

// CheckElicitURL returns the host a card shows for a URL-mode elicitation
// (an internationalized name in its ASCII, punycode, form), or why the URL
// is not offered: only https: URLs, or http: to a loopback host, with a
// host and no user info.
func CheckElicitURL(raw string) (string, error) {
	if len(raw) > maxElicitURL {
		return "", fmt.Errorf("%w: the url is %d bytes (at most %d)", ErrElicitation, len(raw), maxElicitURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: the url does not parse: %v", ErrElicitation, err)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: the url carries user info (%q shows another host than it opens)", ErrElicitation, u.User.Username())
	}
	name := u.Hostname()
	if name == "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: the url has no host", ErrElicitation)
	}
	host := name
	if net.ParseIP(name) == nil {
		if host, err = idna.Lookup.ToASCII(name); err != nil {
			return "", fmt.Errorf("%w: the url's host %q is not a valid name: %v", ErrElicitation, name, err)
		}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !loopback(host) {
			return "", fmt.Errorf("%w: http: is offered for a loopback host only, not %s", ErrElicitation, host)
		}
	default:
		return "", fmt.Errorf("%w: the url's scheme %q is not https", ErrElicitation, u.Scheme)
	}
	return host, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Keys a form's schema may not use: it is self-contained.
var refKeys = []string{"$ref", "$dynamicRef", "$recursiveRef", "$id", "$anchor", "$dynamicAnchor", "$defs", "definitions"}

// CheckRequestedSchema checks that a form's schema is MCP's restricted
// subset and compiles.
func CheckRequestedSchema(raw json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return fmt.Errorf("%w: the requestedSchema is not an object", ErrElicitation)
	}
	var typ string
	if json.Unmarshal(top["type"], &typ) != nil || typ != "object" {
		return fmt.Errorf("%w: the requestedSchema's type must be object", ErrElicitation)
	}
	if err := noRefs(top, "requestedSchema"); err != nil {
		return err
	}
	var whole any
	if err := json.Unmarshal(raw, &whole); err != nil {
		return fmt.Errorf("%w: the requestedSchema is not JSON", ErrElicitation)
	}
	if err := noRefsDeep(whole, "requestedSchema"); err != nil {
		return err
	}
	var props map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["properties"], &props); err != nil {
		return fmt.Errorf("%w: requestedSchema.properties must be an object of schemas", ErrElicitation)
	}
	if len(props) > maxElicitProps {
		return fmt.Errorf("%w: %d properties (at most %d)", ErrElicitation, len(props), maxElicitProps)
	}
	for name, p := range props {
		field := "requestedSchema.properties." + name
		if err := noRefs(p, field); err != nil {
			return err
		}
		var pt string
		_ = json.Unmarshal(p["type"], &pt)
		switch pt {
		case "string", "number", "integer", "boolean":
		case "array": // a multi-select enum: its items are string choices
			var items map[string]json.RawMessage
			var it string
			if json.Unmarshal(p["items"], &items) != nil || noRefs(items, field+".items") != nil {
				return fmt.Errorf("%w: %s: an array's items must be a string enum", ErrElicitation, field)
			}
			_ = json.Unmarshal(items["type"], &it)
			if (it != "string" || items["enum"] == nil) && items["anyOf"] == nil && items["oneOf"] == nil {
				return fmt.Errorf("%w: %s: an array's items must be a string enum", ErrElicitation, field)
			}
		default:
			return fmt.Errorf("%w: %s: type %q is not a primitive (string, number, integer, boolean)", ErrElicitation, field, pt)
		}
	}
	if _, err := compileSchema(raw); err != nil {
		return fmt.Errorf("%w: the requestedSchema does not compile: %v", ErrElicitation, err)
	}
	return nil
}

func noRefs(obj map[string]json.RawMessage, field string) error {
	for _, k := range refKeys {
		if _, ok := obj[k]; ok {
			return fmt.Errorf("%w: %s uses %s (a form's schema is self-contained)", ErrElicitation, field, k)
		}
	}
	return nil
}

// dataKeys are schema keywords whose values are instances, not schemas.
var dataKeys = []string{"enum", "const", "default", "examples"}

// noRefsDeep refuses a reference keyword at any depth of a schema (in
// anyOf, allOf, not, items, additionalProperties, ...): a form's schema is
// self-contained, and a reference, even a local one, can make it a cycle
// no answer validates against.
func noRefsDeep(v any, field string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			switch {
			case slices.Contains(refKeys, k):
				return fmt.Errorf("%w: %s uses %s (a form's schema is self-contained)", ErrElicitation, field, k)
			case slices.Contains(dataKeys, k):
				continue
			case k == "properties" || k == "patternProperties" || k == "dependentSchemas":
				props, _ := sub.(map[string]any)
				for name, p := range props {
					if err := noRefsDeep(p, field+"."+k+"."+name); err != nil {
						return err
					}
				}
				continue
			}
			if err := noRefsDeep(sub, field+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range v {
			if err := noRefsDeep(sub, fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// compileSchema compiles a form's schema, formats asserted, loading nothing.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file:, no network
	const loc = "urn:zqagent:elicitation"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// ContentError is an elicitation answer's content that its form's schema
// refuses: Field is the property ("" for the object itself).
type ContentError struct {
	Field string
	Msg   string
}

func (e *ContentError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

var printer = message.NewPrinter(language.English)

// ValidateContent checks an accepted form's content against its schema; a
// refusal is a *ContentError naming the first property at fault.
func ValidateContent(schema, content json.RawMessage) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return &ContentError{Msg: "the form's schema does not compile: " + err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(content))
	if err != nil {
		return &ContentError{Msg: "not JSON: " + err.Error()}
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	leaf := firstLeaf(ve)
	field := ""
	if len(leaf.InstanceLocation) > 0 {
		field = leaf.InstanceLocation[0]
	}
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		if field == "" && len(k.Missing) > 0 {
			field = slices.Min(k.Missing)
		}
	case *kind.AdditionalProperties:
		if field == "" && len(k.Properties) > 0 {
			field = slices.Min(k.Properties)
		}
	}
	return &ContentError{Field: field, Msg: leaf.ErrorKind.LocalizedString(printer)}
}

// firstLeaf is the first error without causes, depth first.
func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}
