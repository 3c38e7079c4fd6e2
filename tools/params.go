package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/invopop/jsonschema"
)

// ParamsOf returns the JSON schema of a tool's arguments, reflected from
// the args struct T its handler decodes into, so that the struct is the one
// source of what the model is told and what the handler reads. Field tags
// say the rest:
//
//	json:"name"                     the property (a field tagged
//	                                jsonschema:"-" is read but not offered:
//	                                an alias the handler also accepts)
//	jsonschema:"required"           the property is required
//	jsonschema:"minimum=1,maximum=9" bounds; enum=a,enum=b for enums
//	jsonschema_description:"…"      the description (commas allowed)
//
// Only jsonschema:"required" makes a property required (a missing
// omitempty does not), and every object, nested ones included, says
// "additionalProperties": false: NormalizeArgs refuses unknown keys anyway,
// and the model is told so. T must be a struct. Schemas are reflected once
// per type and cached.
func ParamsOf[T any]() json.RawMessage {
	t := reflect.TypeFor[T]()
	if v, ok := paramsCache.Load(t); ok {
		return v.(json.RawMessage)
	}
	b := reflectParams(t)
	paramsCache.Store(t, b)
	return b
}

// paramsCache maps an args struct's reflect.Type to its schema.
var paramsCache sync.Map

var paramsReflector = &jsonschema.Reflector{
	Anonymous:                  true, // no $id
	DoNotReference:             true, // nested structs inline, no $defs
	ExpandedStruct:             true,
	RequiredFromJSONSchemaTags: true,
}

func reflectParams(t reflect.Type) json.RawMessage {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools.ParamsOf: %s is not a struct", t)) // a programming error, caught by every tool's tests
	}
	s := paramsReflector.ReflectFromType(t)
	s.Version = "" // no $schema: the model reads the object itself
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools.ParamsOf(%s): %v", t, err))
	}
	return b
}
