package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// DecodeParams decodes a request's params object into dst (a pointer to a
// struct). Absent params decode as {}. Fields tagged `rpc:"required"` must be
// present and non-zero. Every failure wraps ErrInvalidParams and names the
// offending field, e.g. "invalid params: sessionId: required".
func DecodeParams(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "params"
			}
			kind := jsonKind(te.Type)
			return &ParamError{Field: field, Kind: KindWrongType, Expected: kind, Why: fmt.Sprintf("expected %s, got %s", kind, te.Value)}
		}
		var fe *FieldError
		if errors.As(err, &fe) {
			return &ParamError{Field: fe.Field, Why: fe.Why}
		}
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return checkRequired(reflect.ValueOf(dst).Elem())
}

// checkRequired reports the first field tagged rpc:"required" that is zero.
func checkRequired(v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return nil
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("rpc") != "required" {
			continue
		}
		if v.Field(i).IsZero() {
			return &ParamError{Field: jsonName(f), Kind: KindRequired, Why: "required"}
		}
	}
	return nil
}

// InvalidField is the error of a field that decoded but has a bad value.
func InvalidField(field, why string) error { return &ParamError{Field: field, Why: why} }

// ParamError is an invalid-params error about one field: "invalid params:
// <field>: <why>". It wraps ErrInvalidParams; the wire error's data names
// the field and the kind.
type ParamError struct {
	// Field is the param's path ("sessionId", "response.outcome").
	Field string
	// Kind is required, wrong_type, or "" (invalid_params).
	Kind ErrorKind
	// Expected is the JSON type the field must have (wrong_type).
	Expected string
	// Why says what is wrong.
	Why string
}

func (e *ParamError) Error() string { return ErrInvalidParams.Error() + ": " + e.Field + ": " + e.Why }

// Unwrap returns ErrInvalidParams.
func (e *ParamError) Unwrap() error { return ErrInvalidParams }

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}
