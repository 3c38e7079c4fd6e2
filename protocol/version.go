package protocol

import (
	"bytes"
	"encoding/json"
)

// The protocol versions this package describes. Version is the one the
// ready line announces; initialize accepts any version in [MinVersion,
// MaxVersion] and answers the one chosen.
const (
	MinVersion = 1
	MaxVersion = 1
	Version    = MaxVersion
)

// VersionRange is an inclusive range of protocol versions.
type VersionRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// VersionSpec is initialize's protocolVersion: one version (a number, as
// in 1) or a range ({"min": 1, "max": 2}) of which the sidecar picks the
// highest it speaks. It marshals as a number when Min == Max.
type VersionSpec struct {
	Min, Max int
}

// Exactly is the spec of one version.
func Exactly(v int) VersionSpec { return VersionSpec{Min: v, Max: v} }

// IsZero reports an absent spec (required params check it).
func (v VersionSpec) IsZero() bool { return v.Min == 0 && v.Max == 0 }

// Choose returns the highest version in both v and [lo, hi].
func (v VersionSpec) Choose(lo, hi int) (int, bool) {
	best := min(v.Max, hi)
	if best < max(v.Min, lo) {
		return 0, false
	}
	return best, true
}

// MarshalJSON writes a number for one version, else {min, max}.
func (v VersionSpec) MarshalJSON() ([]byte, error) {
	if v.Min == v.Max {
		return json.Marshal(v.Min)
	}
	return json.Marshal(VersionRange(v))
}

var errVersionSpec = &FieldError{Field: "protocolVersion", Why: "must be a positive integer or {min, max} with 1 <= min <= max"}

// FieldError is a value that does not fit its field, reported by a type's
// UnmarshalJSON (the sidecar answers it as invalid params naming Field).
type FieldError struct {
	Field, Why string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Why }

// UnmarshalJSON reads a number or {min, max}, strictly.
func (v *VersionSpec) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var r VersionRange
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return &FieldError{Field: errVersionSpec.Field, Why: errVersionSpec.Why + ": " + err.Error()}
		}
		if r.Min < 1 || r.Max < r.Min {
			return errVersionSpec
		}
		*v = VersionSpec(r)
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n < 1 {
		return errVersionSpec
	}
	*v = Exactly(n)
	return nil
}
