// Command gostructs prints, as JSON, how Go's encoding/json lays out the Kubernetes core types a
// Dynamo service spec embeds: per struct type, its fields in encoding order with their JSON name,
// whether they carry omitempty, and their type. internal/dynamo/rollout/gojson.py reads the result to encode
// a spec byte for byte as a Go operator would (the worker hash of upstream's rolling update).
//
// Usage: cd hack/gostructs && go run . > ../../internal/dynamo/rollout/go_structs_core_v1.json
// The k8s.io/api version is the one go.mod pins: upstream's (test_dynamo_workerhash checks the match).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// field is one encoded field: its JSON name, omitempty, and a type descriptor: a scalar name
// ("string", "bool", "int", "float", "quantity", "intorstring", "time", "duration", "raw", "bytes") or an object
// {"ptr"|"slice"|"map": descriptor} or {"struct": name}.
type field struct {
	Name      string `json:"name"`
	OmitEmpty bool   `json:"omitempty"`
	Type      any    `json:"type"`
}

var (
	marshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	special   = map[reflect.Type]string{
		reflect.TypeOf(resource.Quantity{}):  "quantity",
		reflect.TypeOf(intstr.IntOrString{}): "intorstring",
		reflect.TypeOf(metav1.Time{}):        "time",
		reflect.TypeOf(metav1.MicroTime{}):   "time",
		reflect.TypeOf(metav1.Duration{}):    "duration",
		reflect.TypeOf(metav1.FieldsV1{}):    "raw",
	}
	structs = map[string][]field{}
)

func structName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	if len(parts) >= 2 {
		return parts[len(parts)-2] + "/" + parts[len(parts)-1] + "." + t.Name()
	}
	return t.PkgPath() + "." + t.Name()
}

func describe(t reflect.Type) any {
	if name, ok := special[t]; ok {
		return name
	}
	if k := t.Kind(); k != reflect.Pointer && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		panic(fmt.Sprintf("%s has its own MarshalJSON: add it to the special types", t))
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Pointer:
		return map[string]any{"ptr": describe(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return map[string]any{"slice": describe(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("map key of %s is not a string", t))
		}
		return map[string]any{"map": describe(t.Elem())}
	case reflect.Struct:
		name := structName(t)
		if _, seen := structs[name]; !seen {
			structs[name] = nil // breaks cycles
			structs[name] = fields(t)
		}
		return map[string]any{"struct": name}
	}
	panic(fmt.Sprintf("unsupported kind %s (%s)", t.Kind(), t))
}

// fields lists t's fields in encoding order, embedded structs flattened in place (Go's rule for an
// anonymous field without a JSON name). The core types have no name clashes between levels.
func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			if sf.Type.Kind() != reflect.Struct {
				panic(fmt.Sprintf("embedded non-struct or pointer %s in %s", sf.Type, t))
			}
			out = append(out, fields(sf.Type)...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if strings.Contains(opts, "string") {
			panic(fmt.Sprintf("%s.%s uses the ,string option", t, sf.Name))
		}
		out = append(out, field{Name: name, OmitEmpty: strings.Contains(opts, "omitempty"), Type: describe(sf.Type)})
	}
	return out
}

func main() {
	roots := map[string]any{}
	for _, v := range []any{corev1.PodSpec{}, corev1.Container{}, corev1.EnvVar{}, corev1.Probe{}, corev1.ResourceClaim{}} {
		t := reflect.TypeOf(v)
		roots[t.Name()] = describe(t)
	}
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/api" {
				version = dep.Version
			}
		}
	}
	names := make([]string, 0, len(structs))
	for name := range structs {
		names = append(names, name)
	}
	sort.Strings(names)
	// One struct per line, each field [name, omitempty, type]: diffs of a regeneration stay readable.
	out := &strings.Builder{}
	rootsJSON, _ := json.Marshal(roots)
	fmt.Fprintf(out, "{\n \"source\": %q,\n \"roots\": %s,\n \"structs\": {\n", "k8s.io/api "+version, rootsJSON)
	for i, name := range names {
		row := make([][3]any, 0, len(structs[name]))
		for _, f := range structs[name] {
			row = append(row, [3]any{f.Name, f.OmitEmpty, f.Type})
		}
		encoded, err := json.Marshal(row)
		if err != nil {
			panic(err)
		}
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(out, "  %q: %s%s\n", name, encoded, sep)
	}
	out.WriteString(" }\n}\n")
	os.Stdout.WriteString(out.String())
}
