package restcompat

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go/openapi31"

	"github.com/wagraph/wagraph/internal/config"
)

// Document generates the OpenAPI 3.1 description of the contract from the
// route table: what openapi.json holds (make generate writes it, a test
// holds the two equal).
func Document() ([]byte, error) {
	g, err := newGenerator()
	if err != nil {
		return nil, err
	}
	for _, rt := range routes() {
		if err := g.add(rt); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", rt.pattern(), err)
		}
	}
	// Two Go types of one name: the library would number the second
	// (PollOptionType2), a name no one chose.
	for name := range g.spec.Components.Schemas {
		if numbered.MatchString(name) {
			return nil, fmt.Errorf("openapi: schema %s: two Go types map to one schema name; rename one", name)
		}
	}
	out, err := json.MarshalIndent(g.spec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return append(out, '\n'), nil
}

const schemaRefs = "#/components/schemas/"

var numbered = regexp.MustCompile(`Type[0-9]+$`)

type generator struct {
	spec *openapi31.Spec
	refl *openapi31.Reflector
}

func newGenerator() (*generator, error) {
	spec := &openapi31.Spec{Openapi: "3.1.0", Info: info(), Servers: []openapi31.Server{{URL: Prefix}},
		Security: []map[string][]string{{"token": {}}}, Tags: tags()}
	comps := spec.ComponentsEns()
	spec.SetAPIKeySecurity("token", "Authorization", "header", "A user token (wgu_…, reaches every session its user owns) or a session token (wgs_…, reaches only its own session). The \"Bearer \" prefix is optional: \"Authorization: wgu_…\" and \"Authorization: Bearer wgu_…\" are the same.")
	for _, p := range allParams {
		comps.WithParametersItem(p.key, openapi31.ParameterOrReference{Parameter: p.parameter()})
	}
	for _, f := range failureResponses {
		comps.WithResponsesItem(f.name, openapi31.ResponseOrReference{Response: f.response()})
	}
	r := openapi31.NewReflector()
	r.Spec = spec
	g := &generator{spec: spec, refl: r}
	// The failure answers above refer to the envelope.
	if _, err := g.schema(failure{}, false); err != nil {
		return nil, fmt.Errorf("openapi: the failure envelope: %w", err)
	}
	return g, nil
}

// schema reflects the Go type of v into a $ref to its component schema,
// adding the components it needs. A request's objects are closed
// (additionalProperties false) because decodeBody refuses unknown fields.
func (g *generator) schema(v any, request bool) (map[string]any, error) {
	var collectErr error
	opts := []func(*jsonschema.ReflectContext){
		jsonschema.RootRef,
		jsonschema.DefinitionsPrefix(schemaRefs),
		jsonschema.InterceptDefName(defName),
		jsonschema.InterceptNullability(notNull),
		jsonschema.CollectDefinitions(func(name string, s jsonschema.Schema) {
			if _, ok := g.spec.Components.Schemas[name]; ok {
				return
			}
			if request {
				closeObject(&s)
			}
			sm, err := s.ToSchemaOrBool().ToSimpleMap()
			if err != nil {
				collectErr = errors.Join(collectErr, fmt.Errorf("schema %s: %w", name, err))
				return
			}
			g.spec.Components.WithSchemasItem(name, sm)
		}),
	}
	s, err := g.refl.Reflect(v, opts...)
	if err != nil || collectErr != nil {
		return nil, errors.Join(err, collectErr)
	}
	if request {
		closeObject(&s)
	}
	return s.ToSchemaOrBool().ToSimpleMap()
}

// defName names a component after its Go type: sendTextRequest is
// SendTextRequest, sessionJSON (an answer's shape) is Session; a type
// with a schemaName method is named by it.
func defName(t reflect.Type, def string) string {
	if n, ok := reflect.Zero(t).Interface().(interface{ schemaName() string }); ok {
		return n.schemaName()
	}
	name := strings.TrimSuffix(t.Name(), "JSON")
	if name == "" {
		return def
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// notNull: a field that may be absent (omitempty) is absent rather than
// null, and the handlers never write a nil slice or map.
func notNull(p jsonschema.InterceptNullabilityParams) {
	k := p.Type.Kind()
	if p.OmitEmpty || k == reflect.Slice || k == reflect.Map {
		p.Schema.RemoveType(jsonschema.Null)
	}
}

// closeObject closes a struct's object: a map's additionalProperties (its
// values' schema) stay.
func closeObject(s *jsonschema.Schema) {
	if s.HasType(jsonschema.Object) && s.AdditionalProperties == nil && len(s.Properties) > 0 {
		s.WithAdditionalProperties(jsonschema.SchemaOrBool{TypeBoolean: new(bool)})
	}
}

// implicitFailures are the failures a route may answer without listing
// them: every route is authenticated, rate limited and may fail inside;
// decodeBody answers 400, 413 and 415; a session in the path may not
// exist.
func (rt route) implicitFailures() []int {
	out := []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError}
	if rt.body != nil {
		out = append(out, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	if strings.Contains(rt.path, "{sessionId}") {
		out = append(out, http.StatusNotFound)
	}
	return out
}

func (g *generator) add(rt route) error {
	op := openapi31.Operation{}
	op.WithID(rt.id).WithSummary(rt.summary).WithDescription(rt.description).WithTags(rt.tag)
	for _, p := range rt.params {
		op.Parameters = append(op.Parameters, openapi31.ParameterOrReference{
			Reference: &openapi31.Reference{Ref: "#/components/parameters/" + p.key}})
	}
	if rt.body != nil {
		s, err := g.schema(rt.body, true)
		if err != nil {
			return fmt.Errorf("request body: %w", err)
		}
		mt := openapi31.MediaType{Schema: s}
		if rt.bodyExample != "" {
			mt.Example = rawExample(rt.bodyExample)
		}
		for _, ex := range rt.bodyExamples {
			mt.WithExamplesItem(ex.name, openapi31.ExampleOrReference{Example: (&openapi31.Example{
				Value: rawExample(ex.json)}).WithSummary(ex.summary)})
		}
		rb := op.RequestBodyEns().RequestBodyEns().WithRequired(!rt.optional).WithContentItem("application/json", mt).
			WithDescription(rt.bodyLimitNote())
		if limit := rt.bodyLimit(0); limit != math.MaxInt64 {
			rb.WithMapOfAnythingItem("x-max-body-bytes", limit)
		}
	}

	res := &openapi31.Response{Description: rt.answer, Content: map[string]openapi31.MediaType{}}
	if rt.data != nil {
		s, err := g.schema(rt.data, false)
		if err != nil {
			return fmt.Errorf("answer: %w", err)
		}
		example := rt.dataExample
		if !rt.bare {
			s = map[string]any{"type": "object", "required": []string{"status", "data"}, "properties": map[string]any{
				"status": map[string]any{"type": "string", "const": "success"}, "data": s}}
			example = `{"status":"success","data":` + example + `}`
		}
		res.Content["application/json"] = openapi31.MediaType{Schema: s, Example: rawExample(example)}
	}
	if rt.describe != nil {
		rt.describe(res)
	}
	rs := op.ResponsesEns()
	rs.WithMapOfResponseOrReferenceValuesItem(strconv.Itoa(rt.status), openapi31.ResponseOrReference{Response: res})
	codes := append(rt.implicitFailures(), rt.failures...)
	slices.Sort(codes)
	for _, code := range slices.Compact(codes) {
		f, ok := failureOf(code)
		if !ok {
			return fmt.Errorf("no shared failure response for status %d", code)
		}
		rs.WithMapOfResponseOrReferenceValuesItem(strconv.Itoa(code), openapi31.ResponseOrReference{
			Reference: &openapi31.Reference{Ref: "#/components/responses/" + f.name}})
	}

	pi := g.spec.PathsEns().MapOfPathItemValues[rt.path]
	if existing, _ := pi.Operation(rt.method); existing != nil {
		return fmt.Errorf("described twice")
	}
	if err := pi.SetOperation(rt.method, &op); err != nil {
		return err
	}
	g.spec.Paths.WithMapOfPathItemValuesItem(rt.path, pi)
	return nil
}

// bodyLimitNote says how large the route's body may be.
func (rt route) bodyLimitNote() string {
	if rt.maxBody == mediaBody {
		return "At most --max-body (default 64 MiB; the media sent inline is most of it): a larger body is refused with 413, before it is read when its Content-Length says so."
	}
	return "At most " + config.FormatSize(rt.bodyLimit(0)) + " (or --max-body when that is smaller): a larger body is refused with 413, before it is read when its Content-Length says so."
}

// rawExample keeps an example's JSON as written, its keys in their order.
func rawExample(s string) *any {
	var v any = json.RawMessage(s)
	return &v
}

// binary is the media type of an answer that is bytes, not JSON.
func binary(contentMediaType, description string) openapi31.MediaType {
	s := map[string]any{"type": "string", "contentMediaType": contentMediaType}
	if description != "" {
		s["description"] = description
	}
	return openapi31.MediaType{Schema: s}
}
