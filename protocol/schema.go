package protocol

import _ "embed"

// Schema is schema.json: the JSON Schema (2020-12) of the protocol,
// generated from this package's types (go generate). Its layout is described
// in internal/schemagen.
//
//go:embed schema.json
var Schema []byte
